/**
 * The ZATCA commands of the admin CLI (registered by scripts/admin.ts): onboarding of a Saudi EGS
 * unit with ZATCA's API, one step per command, each printing the unit's onboarding status as JSON.
 *
 *   zatca register --workspace <id> --egs-unit <id> --environment sandbox|simulation|production --seller-vat <15 digits>
 *                  --common-name <CN> --serial-number 1-…|2-…|3-… --organization-unit <branch> --organization-name <name>
 *                  --invoice-type 1100|1000|0100 --location <address> --industry <sector>
 *   zatca csr --egs-unit <id>                       a key pair (secp256k1) and its CSR (printed)
 *   zatca compliance-csid --egs-unit <id> --otp <6 digits>
 *   zatca compliance-checks --egs-unit <id>         the required sample documents, stamped, checked by ZATCA
 *   zatca production-csid --egs-unit <id>
 *   zatca renew --egs-unit <id> --otp <6 digits>    a new key and CSR, and its production CSID
 *   zatca revoke --egs-unit <id> [--reason <text>]
 *   zatca status --egs-unit <id>
 *   zatca expiring [--within-days 30]               units whose production CSID expires within the window (or has expired)
 *
 * The API calls go to the environment the unit was registered in: ZATCA_BASE_URL when it is the
 * configured ZATCA_ENVIRONMENT, else ZATCA's published base URL. A refusal by ZATCA prints one line
 * on stderr (with ZATCA's code and message) and exits 2; nothing is recorded for a refused step.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { createEgsCsr, egsSecretBox, expiringProductionCsids, generateEgsKey, loadEgsUnit, registerEgsUnit, revokeEgsUnit, type EgsUnit } from '../commands/zatca/egs-units.js';
import { onboardingStatus, renewProductionCsid, requestComplianceCsid, requestProductionCsid, runComplianceChecks, type OnboardingDeps } from '../commands/zatca/onboarding.js';
import { zatcaClient } from '../commands/zatca/production.js';
import { ZATCA_ENVIRONMENTS } from '../platform/config.js';
import type { Runtime } from '../commands/runtime.js';
import type { AdminHelpers } from './admin-connect.js';

const otp = (value: string) => {
  if (!/^\d{6}$/.test(value)) throw new InvalidArgumentError('expected the 6-digit OTP from ZATCA\'s portal');
  return value;
};
const vat = (value: string) => {
  if (!/^3\d{13}3$/.test(value)) throw new InvalidArgumentError('expected a Saudi VAT number: 15 digits, starting and ending with 3');
  return value;
};
const days = (value: string) => {
  if (!/^\d{1,4}$/.test(value)) throw new InvalidArgumentError('expected a whole number of days (0-9999)');
  return Number(value);
};
const unitId = (value: string) => {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(value)) throw new InvalidArgumentError('expected letters, digits, ".", "_" and "-" (at most 100)');
  return value;
};

export function registerZatcaCommands(program: Command, h: AdminHelpers): void {
  const zatca = program.command('zatca').description('Saudi Arabia: onboarding of EGS units with ZATCA');

  const deps = async (r: Runtime, unit: EgsUnit | null): Promise<OnboardingDeps> => ({
    store: r.store,
    secrets: egsSecretBox(r.config),
    client: zatcaClient(r.config.zatca, unit?.environment ?? r.config.zatca?.environment ?? 'sandbox'),
  });
  const mustLoad = async (r: Runtime, id: string): Promise<EgsUnit> => {
    const unit = await loadEgsUnit(r.store, id);
    if (!unit) throw h.usage(`no EGS unit ${id}`);
    return unit;
  };
  const done = (unit: EgsUnit, extra: Record<string, unknown> = {}) => h.print({ ...onboardingStatus(unit), ...extra });

  zatca
    .command('register')
    .description('register an EGS unit of a seller (one per company or branch)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--egs-unit <id>', 'the unit id (e.g. the serial number\'s 3-… part)', unitId)
    .addOption(new Option('--environment <env>', 'ZATCA environment the unit is onboarded in').choices(ZATCA_ENVIRONMENTS).makeOptionMandatory())
    .requiredOption('--seller-vat <vat>', 'the seller\'s VAT registration number', vat)
    .requiredOption('--common-name <cn>', 'CN of the certificate (the unit\'s name)')
    .requiredOption('--serial-number <sn>', 'the EGS serial number: 1-<solution>|2-<model or version>|3-<serial>')
    .requiredOption('--organization-unit <ou>', 'the branch name (or, in a VAT group, the member\'s 10-digit TIN)')
    .requiredOption('--organization-name <o>', 'the taxpayer\'s name')
    .option('--invoice-type <tscz>', 'invoice types the unit issues: 1100 both, 1000 standard, 0100 simplified', '1100')
    .requiredOption('--location <address>', 'the branch\'s address')
    .requiredOption('--industry <sector>', 'the industry or sector')
    .action(async (o: { workspace: string; egsUnit: string; environment: (typeof ZATCA_ENVIRONMENTS)[number]; sellerVat: string; commonName: string; serialNumber: string; organizationUnit: string; organizationName: string; invoiceType: string; location: string; industry: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const unit = await registerEgsUnit(
        { store: r.store, secrets: egsSecretBox(r.config) },
        {
          egsUnitId: o.egsUnit,
          workspaceId: o.workspace,
          environment: o.environment,
          sellerVat: o.sellerVat,
          subject: { commonName: o.commonName, serialNumber: o.serialNumber, organizationUnit: o.organizationUnit, organizationName: o.organizationName, country: 'SA', invoiceType: o.invoiceType, location: o.location, industry: o.industry },
        },
        h.ctx(),
      );
      done(unit);
    });

  zatca
    .command('csr')
    .description('generate the unit\'s key pair (secp256k1) and its CSR')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .action(async (o: { egsUnit: string }) => {
      const r = await h.rt();
      const d = await deps(r, await mustLoad(r, o.egsUnit));
      let unit = await mustLoad(r, o.egsUnit);
      if (unit.pendingKeyId === null) await generateEgsKey(d, o.egsUnit, h.ctx());
      const { csrPem } = await createEgsCsr(d, o.egsUnit, h.ctx());
      unit = await mustLoad(r, o.egsUnit);
      done(unit, { csrPem });
    });

  zatca
    .command('compliance-csid')
    .description('request the compliance CSID (POST /compliance) with the OTP from ZATCA\'s portal')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .requiredOption('--otp <otp>', 'the one-time password', otp)
    .action(async (o: { egsUnit: string; otp: string }) => {
      const r = await h.rt();
      const d = await deps(r, await mustLoad(r, o.egsUnit));
      done(await requestComplianceCsid(d, o.egsUnit, o.otp, h.ctx()));
    });

  zatca
    .command('compliance-checks')
    .description('send the sample documents ZATCA requires, stamped with the compliance CSID (POST /compliance/invoices)')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .action(async (o: { egsUnit: string }) => {
      const r = await h.rt();
      const d = await deps(r, await mustLoad(r, o.egsUnit));
      const { unit, results } = await runComplianceChecks(d, o.egsUnit, h.ctx());
      done(unit, { checks: results.map((c) => ({ kind: c.kind, document: c.base, status: c.status, passed: c.passed, warnings: c.warnings })) });
    });

  zatca
    .command('production-csid')
    .description('request the production CSID (POST /production/csids) once the compliance checks passed')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .action(async (o: { egsUnit: string }) => {
      const r = await h.rt();
      const d = await deps(r, await mustLoad(r, o.egsUnit));
      done(await requestProductionCsid(d, o.egsUnit, h.ctx()));
    });

  zatca
    .command('renew')
    .description('renew the production CSID with a new key and CSR (PATCH /production/csids)')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .requiredOption('--otp <otp>', 'the one-time password', otp)
    .action(async (o: { egsUnit: string; otp: string }) => {
      const r = await h.rt();
      const d = await deps(r, await mustLoad(r, o.egsUnit));
      done(await renewProductionCsid(d, o.egsUnit, o.otp, h.ctx()));
    });

  zatca
    .command('revoke')
    .description('stop using the unit (its invoices are no longer stamped or sent with its CSID)')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .option('--reason <text>', 'why')
    .action(async (o: { egsUnit: string; reason?: string }) => {
      const r = await h.rt();
      await mustLoad(r, o.egsUnit);
      done(await revokeEgsUnit({ store: r.store, secrets: egsSecretBox(r.config) }, o.egsUnit, o.reason ?? null, h.ctx()));
    });

  zatca
    .command('status')
    .description('where the unit stands in onboarding (no secrets)')
    .requiredOption('--egs-unit <id>', 'the unit id', unitId)
    .action(async (o: { egsUnit: string }) => {
      const r = await h.rt();
      done(await mustLoad(r, o.egsUnit));
    });

  zatca
    .command('expiring')
    .description('units whose active production CSID expires within the window or has expired (renew them with `zatca renew`)')
    .option('--within-days <days>', 'the window, in days from now', days, 30)
    .action(async (o: { withinDays: number }) => {
      const r = await h.rt();
      const now = h.ctx().now;
      const units = await expiringProductionCsids(r.store, now, o.withinDays);
      h.print({ now: now.toISOString(), withinDays: o.withinDays, units });
    });
}
