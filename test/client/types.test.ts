/**
 * The client is typed end to end: a real invoice (examples/ae-tax-invoice.json as a literal) is a
 * `UnifySubmission` without a cast, and a misspelt member fails to compile. The type checks run
 * with the project's type check (`npm test` runs tsc first); the last test runs the compiler on a
 * file without the expect-error marker and reads its error.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { CoreDocument, paths, UnifySubmission } from '../../clients/typescript/src/index.js';

const realInvoice = {
    "country": "AE",
    "environment": "sandbox",
    "purpose": "invoicing",
    "source": "Acme ERP:v1",
    "documentType": {
      "base": "tax_invoice",
      "modifiers": []
    },
    "payload": {
      "header": {
        "documentType": {
          "base": "tax_invoice"
        },
        "documentNumber": "EX-AE-INV-0001",
        "documentId": "doc-AE-000001",
        "issueDate": "2026-01-15",
        "dueDate": "2026-02-14",
        "currency": "AED"
      },
      "parties": {
        "seller": {
          "name": "Falcon Trading LLC",
          "address": {
            "country": "AE",
            "city": "Dubai",
            "addressLine1": "Office 1204, Bay Square, Business Bay",
            "stateOrProvince": "DXB"
          },
          "taxIds": [
            {
              "type": "TRN",
              "value": "100234567800003"
            }
          ],
          "registrationNumbers": [
            {
              "type": "TL",
              "value": "CN-1234567"
            }
          ],
          "peppolId": "1002345678"
        },
        "buyer": {
          "name": "Oasis Retail PJSC",
          "address": {
            "country": "AE",
            "city": "Abu Dhabi",
            "addressLine1": "Tower B, Al Maryah Island",
            "stateOrProvince": "AUH"
          },
          "taxIds": [
            {
              "type": "TRN",
              "value": "100987654300003"
            }
          ],
          "registrationNumbers": [
            {
              "type": "TL",
              "value": "CN-7654321"
            }
          ],
          "peppolId": "1009876543"
        }
      },
      "lineItems": [
        {
          "id": "1",
          "name": "Item 1: industrial supply",
          "quantity": 1,
          "unitCode": "EA",
          "taxAmount": 0.63,
          "lineTaxableValue": 12.5,
          "taxCategory": "S",
          "taxRate": 5,
          "commodityClassification": {
            "code": "8471.30",
            "scheme": "HS"
          },
          "price": {
            "amount": 12.5,
            "grossPrice": 12.5
          },
          "extensions": {
            "ae_itemType": "G"
          }
        },
        {
          "id": "2",
          "name": "Item 2: industrial supply",
          "quantity": 2,
          "unitCode": "EA",
          "taxAmount": 1.63,
          "lineTaxableValue": 32.5,
          "taxCategory": "S",
          "taxRate": 5,
          "commodityClassification": {
            "code": "8471.31",
            "scheme": "HS"
          },
          "price": {
            "amount": 16.25,
            "grossPrice": 16.25
          },
          "extensions": {
            "ae_itemType": "S",
            "ae_serviceAccountingCode": "998311"
          }
        }
      ],
      "payment": {
        "paymentMeans": [
          {
            "paymentMeansCode": "30",
            "creditTransferInfo": {
              "payeeFinancialAccountId": "AE070331234567890123456"
            }
          }
        ]
      },
      "taxTotals": [
        {
          "taxCategory": "S",
          "taxRate": 5,
          "taxableAmount": 45,
          "taxAmount": 2.26
        }
      ],
      "totals": {
        "totalLineTaxableAmount": 45,
        "totalAmountExcludingTax": 45,
        "totalTaxAmount": 2.26,
        "totalAmountIncludingTax": 47.26,
        "amountDue": 47.26
      },
      "extensions": {
        "peppol_seller_peppolIdScheme": "0235",
        "peppol_buyer_peppolIdScheme": "0235",
        "ae_seller_authorityName": "Dubai Department of Economy and Tourism",
        "ae_buyer_authorityName": "Abu Dhabi Department of Economic Development"
      }
    }
  } satisfies UnifySubmission;

const misspelt: CoreDocument = {
  header: {
    // @ts-expect-error documentNumbr is not a member of the header
    documentNumbr: 'INV-1',
  },
};

const wrongType: CoreDocument = {
  // @ts-expect-error quantity is a number
  lineItems: [{ id: '1', quantity: 'two' }],
};

// POST /as4 (for other Peppol access points) is left out of the client: '/as4' is not one of its paths.
const as4LeftOut: '/as4' extends keyof paths ? never : true = true;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('TypeScript client: typed end to end', function () {
  this.timeout(120_000);

  it('takes the example invoice as a literal and refuses misspelt or mistyped members at compile time', () => {
    expect(realInvoice.payload.header.documentNumber).to.equal('EX-AE-INV-0001');
    expect(misspelt.header).to.deep.equal({ documentNumbr: 'INV-1' });
    expect(wrongType.lineItems).to.have.length(1);
  });

  it('has no path /as4 (the AS4 endpoint of the Peppol access point is not for integrators)', () => {
    expect(as4LeftOut).to.equal(true);
  });

  it('the compiler names the misspelt member', async () => {
    const dir = mkdtempSync(path.join(ROOT, 'test/client/.tmp-'));
    try {
      writeFileSync(
        path.join(dir, 'typo.ts'),
        `import type { CoreDocument } from '../../../clients/typescript/src/index.js';\nexport const d: CoreDocument = { header: { documentNumbr: 'INV-1' } };\n`,
      );
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ extends: '../../../tsconfig.json', include: ['typo.ts'], compilerOptions: { noEmit: true } }),
      );
      const out = await new Promise<string>((resolve) =>
        execFile(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: ROOT }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`)),
      );
      expect(out).to.contain('typo.ts').and.to.contain("'documentNumbr'");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
