/** The source a Unify submission (either format) names, resolved for its workspace. */
import { submissionServesCompany } from '../../domain/connect/environment.js';
import { sourceForInvoicing } from '../../domain/connect/values.js';
import type { HttpDeps } from '../app.js';
import { HttpProblem, type ErrorPath } from '../errors.js';

/**
 * The workspace's source, ready for invoicing, or the 400/404 the spec names. The document is
 * submitted in its company's environment (the Connect section of the OpenAPI document): a production submission through a
 * company onboarded in sandbox or simulation, or the reverse, is refused with 403
 * (`deniedCode`), naming the source.
 */
export async function resolveSource(
  deps: HttpDeps,
  workspaceId: string,
  name: string,
  version: string,
  path: ErrorPath,
  environment: { requested: string; deniedCode: string },
) {
  const source = await deps.sources.find(workspaceId, name, version);
  if (!source) throw new HttpProblem(404, `source ${name}:${version} was not found in this workspace`, { path, code: 'not_found' });
  if (!submissionServesCompany(source.platformEnvironment, environment.requested)) {
    const message = `source ${name}:${version} belongs to a company onboarded in ${source.platformEnvironment}; it cannot submit to ${environment.requested}`;
    throw new HttpProblem(403, message, { code: environment.deniedCode, path, details: [{ code: environment.deniedCode, message, path }] });
  }
  const usable = sourceForInvoicing(source);
  if (!usable.ok) {
    const why = usable.reason === 'inactive' ? 'is inactive' : 'is not ready for invoicing: its field mapping is not configured';
    throw new HttpProblem(400, `source ${name}:${version} ${why}`, { path });
  }
  return { name, version, companyId: source.companyId, templateId: usable.templateId };
}
