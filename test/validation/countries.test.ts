/** Saudi Arabia, Malaysia, Belgium and Germany: mandatory fields and tax-id formats. */
import { expect } from 'chai';
import { belgianCheckDigitsOk, isCalendarDate } from '../../domain/validation/formats.js';
import { codes, docFor, dt, unset, validate, type Doc } from './helpers.js';

type Country = 'SA' | 'MY' | 'BE' | 'DE';
const run = (country: Country, mutate?: (d: Doc) => void, type = dt('tax_invoice')) => validate(country, type, docFor(country, type, mutate));
const taxId = (role: 'seller' | 'buyer', value: string, type = 'VAT') => (d: Doc) => (d.parties[role].taxIds = [{ type, value }]);

describe('other countries: the samples are valid for every base', () => {
  for (const country of ['SA', 'MY', 'BE', 'DE'] as const) {
    for (const base of ['tax_invoice', 'credit_note', 'debit_note']) {
      it(`${country} ${base}`, () => {
        const r = run(country, undefined, dt(base));
        expect(r.errors).to.deep.equal([]);
        expect(r.warnings).to.deep.equal([]);
      });
    }
  }
});

describe('mandatory header fields', () => {
  for (const country of ['SA', 'MY', 'BE', 'DE'] as const) {
    it(`${country}: document number, issue date, currency and base`, () => {
      const r = run(country, (d) => (d.header = {}));
      expect(codes(r.errors)).to.deep.equal([`${country}-HEAD-001`, `${country}-HEAD-002`, `${country}-HEAD-003`, `${country}-HEAD-004`]);
    });
    it(`${country}: the due date is optional`, () => {
      expect(run(country, (d) => delete d.header.dueDate).errors).to.deep.equal([]);
    });
    it(`${country}: no emirate rule`, () => {
      expect(run(country, (d) => (d.parties.seller.address.stateOrProvince = 'Anywhere')).errors).to.deep.equal([]);
    });
  }
  for (const country of ['SA', 'MY'] as const) {
    for (const base of ['credit_note', 'debit_note']) {
      it(`${country}: ${base} needs the preceding invoice id`, () => {
        const r = run(country, (d) => delete d.header.precedingInvoiceReference, dt(base));
        expect(codes(r.errors)).to.deep.equal([`${country}-HEAD-006`]);
      });
    }
  }
  it('BE and DE credit notes do not need a preceding invoice', () => {
    expect(run('BE', (d) => delete d.header.precedingInvoiceReference, dt('credit_note')).errors).to.deep.equal([]);
    expect(run('DE', (d) => delete d.header.precedingInvoiceReference, dt('credit_note')).errors).to.deep.equal([]);
  });
});

describe('mandatory party fields', () => {
  const table: Array<[Country, string, string]> = [
    ['SA', 'seller.name', 'SA-SELL-002'],
    ['SA', 'seller.address.addressLine1', 'SA-SELL-005'],
    ['SA', 'seller.address.city', 'SA-SELL-006'],
    ['SA', 'seller.address.country', 'SA-SELL-008'],
    ['SA', 'seller.taxIds[0].type', 'SA-SELL-009'],
    ['SA', 'seller.taxIds[0].value', 'SA-SELL-010'],
    ['SA', 'buyer.name', 'SA-BUY-002'],
    ['SA', 'buyer.address.city', 'SA-BUY-006'],
    ['MY', 'seller.name', 'MY-SELL-002'],
    ['MY', 'seller.taxIds[0].value', 'MY-SELL-010'],
    ['MY', 'seller.registrationNumbers[0].type', 'MY-SELL-001'],
    ['MY', 'seller.registrationNumbers[0].value', 'MY-SELL-003'],
    ['MY', 'seller.address.stateOrProvince', 'MY-SELL-007'],
    ['MY', 'buyer.taxIds[0].value', 'MY-BUY-010'],
    ['MY', 'buyer.registrationNumbers[0].value', 'MY-BUY-003'],
    ['MY', 'buyer.address.addressLine1', 'MY-BUY-005'],
    ['BE', 'seller.name', 'BE-SELL-002'],
    ['BE', 'seller.peppolId', 'BE-SELL-004'],
    ['BE', 'seller.address.country', 'BE-SELL-008'],
    ['BE', 'buyer.peppolId', 'BE-BUY-004'],
    ['BE', 'buyer.name', 'BE-BUY-002'],
    ['DE', 'seller.address.city', 'DE-SELL-006'],
    ['DE', 'seller.peppolId', 'DE-SELL-004'],
    ['DE', 'buyer.address.country', 'DE-BUY-008'],
    ['DE', 'buyer.peppolId', 'DE-BUY-004'],
  ];
  for (const [country, path, code] of table) {
    it(`${country}: ${path} -> ${code}`, () => {
      const r = run(country, (d) => unset(d, `parties.${path}`));
      expect(r.errors.map((e) => [e.code, e.corePath])).to.deep.equal([[code, `parties.${path}`]]);
    });
  }
  it('SA simplified invoices need no buyer name or address', () => {
    const type = dt('tax_invoice', [], 'simplified');
    expect(run('SA', (d) => delete d.parties.buyer, type).errors).to.deep.equal([]);
    expect(codes(run('SA', (d) => delete d.parties.buyer).errors)).to.deep.equal(['SA-BUY-002', 'SA-BUY-005', 'SA-BUY-006', 'SA-BUY-008']);
  });
  it('BE and DE sellers: a VAT id or a registration number (BR-CO-26), the VAT id as the lines\' categories ask (BR-S-02...)', () => {
    for (const country of ['BE', 'DE'] as const) {
      // Standard-rated lines and no identifier at all: both official rules refuse.
      const r = run(country, (d) => unset(d, 'parties.seller.taxIds[0].value'));
      expect(r.errors.map((e) => [e.code, e.corePath, e.officialRule])).to.deep.equal([
        [`${country}-SELL-009`, 'parties.seller.taxIds[0].value', 'BR-CO-26'],
        [`${country}-SELL-010`, 'parties.seller.taxIds', 'BR-S-02'],
      ]);
      // A registration number identifies the seller, but standard-rated lines still need the VAT id.
      const registered = run(country, (d) => {
        delete d.parties.seller.taxIds;
        d.parties.seller.registrationNumbers = [{ type: '0208', value: '0123456749' }];
      });
      expect(registered.errors.map((e) => [e.code, e.officialRule])).to.deep.equal([[`${country}-SELL-010`, 'BR-S-02']]);
    }
  });
  it('BE and DE buyers need no tax id', () => {
    expect(run('BE', (d) => delete d.parties.buyer.taxIds).errors).to.deep.equal([]);
    expect(run('DE', (d) => delete d.parties.buyer.taxIds).errors).to.deep.equal([]);
  });
});

describe('tax-id formats', () => {
  const table: Array<[Country, string, (d: Doc) => void, string[]]> = [
    ['SA', 'VAT 15 digits starting and ending with 3', taxId('seller', '311111111111113'), []],
    ['SA', 'VAT not ending with 3', taxId('seller', '300000000000001'), ['SA-SELL-012']],
    ['SA', 'VAT not starting with 3', taxId('seller', '100000000000003'), ['SA-SELL-012']],
    ['SA', 'VAT of 14 digits', taxId('seller', '30000000000003'), ['SA-SELL-012']],
    ['SA', 'buyer VAT', taxId('buyer', '3000000000000033'), ['SA-BUY-012']],
    ['SA', 'a non-Saudi buyer VAT is not checked', (d) => {
      d.parties.buyer.address.country = 'AE';
      d.parties.buyer.taxIds = [{ type: 'VAT', value: '100234567800003' }];
    }, []],
    ['MY', 'company TIN C + digits', taxId('seller', 'C2584563222', 'TIN'), []],
    ['MY', 'individual TIN IG + digits', taxId('seller', 'IG21136626090', 'TIN'), []],
    ['MY', 'general public TIN EI00000000010', taxId('buyer', 'EI00000000010', 'TIN'), []],
    ['MY', 'TIN without prefix', taxId('seller', '2584563222', 'TIN'), ['MY-SELL-012']],
    ['MY', 'TIN with an unknown prefix', taxId('buyer', 'X2584563222', 'TIN'), ['MY-BUY-012']],
    ['MY', 'TIN too short', taxId('seller', 'C12345', 'TIN'), ['MY-SELL-012']],
    ['MY', 'BRN of 12 digits', (d) => (d.parties.seller.registrationNumbers = [{ type: 'BRN', value: '202001234567' }]), []],
    ['MY', 'old BRN form', (d) => (d.parties.seller.registrationNumbers = [{ type: 'BRN', value: '1234567-X' }]), []],
    ['MY', 'BRN with letters', (d) => (d.parties.seller.registrationNumbers = [{ type: 'BRN', value: 'ABC123' }]), ['MY-SELL-014']],
    ['MY', 'NRIC', (d) => (d.parties.buyer.registrationNumbers = [{ type: 'NRIC', value: '880101-14-5678' }]), []],
    ['MY', 'NRIC too short', (d) => (d.parties.buyer.registrationNumbers = [{ type: 'NRIC', value: '8801011456' }]), ['MY-BUY-014']],
    ['BE', 'VAT BE0 with a good check', taxId('seller', 'BE0123456749'), []],
    ['BE', 'VAT BE1 with a good check', taxId('seller', `BE1${'00000000'.slice(1)}${String(97 - (10000000 % 97)).padStart(2, '0')}`), []],
    ['BE', 'VAT with a bad check', taxId('seller', 'BE0123456748'), ['BE-SELL-012']],
    ['BE', 'VAT starting with BE2', taxId('seller', 'BE2123456749'), ['BE-SELL-012']],
    ['BE', 'VAT without BE prefix for a Belgian party', taxId('seller', '0123456749'), ['BE-SELL-012']],
    ['BE', 'buyer VAT bad check', taxId('buyer', 'BE0987654321'), ['BE-BUY-012']],
    ['BE', 'a Dutch buyer VAT is not checked as Belgian', (d) => {
      d.parties.buyer.address.country = 'NL';
      d.parties.buyer.taxIds = [{ type: 'VAT', value: 'NL123456789B01' }];
    }, []],
    ['DE', 'USt-IdNr DE + 9 digits', taxId('seller', 'DE811907980'), []],
    ['DE', 'USt-IdNr with 8 digits', taxId('seller', 'DE81190798'), ['DE-SELL-012']],
    ['DE', 'USt-IdNr with letters', taxId('buyer', 'DE81190798X'), ['DE-BUY-012']],
    ['DE', 'a tax number (other type) is not a VAT id', taxId('seller', '21/815/08150', 'FC'), []],
  ];
  for (const [country, name, mutate, expected] of table) {
    it(`${country}: ${name} -> ${expected.length ? expected.join(', ') : 'valid'}`, () => {
      const r = run(country, mutate);
      expect(codes(r.errors), JSON.stringify(r.errors)).to.deep.equal(expected);
    });
  }
});

describe('format helpers', () => {
  it('calendar dates', () => {
    for (const ok of ['2026-01-15', '2024-02-29', '2000-02-29', '1999-12-31', '0001-01-01']) expect(isCalendarDate(ok), ok).to.equal(true);
    for (const bad of ['1900-02-29', '2026-02-29', '2026-04-31', '2026-00-10', '2026-1-15', '2026/01/15', '20260115', '', '2026-01-15 ', '0000-01-01'])
      expect(isCalendarDate(bad), bad).to.equal(false);
  });
  it('Belgian mod-97', () => {
    expect(belgianCheckDigitsOk('0123456749')).to.equal(true);
    expect(belgianCheckDigitsOk('0417497106')).to.equal(true);
    expect(belgianCheckDigitsOk('0417497107')).to.equal(false);
  });
});
