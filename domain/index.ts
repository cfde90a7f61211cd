/**
 * Loads every aggregate module so that each registers its fold (see aggregates.ts).
 * Entry points that fold arbitrary streams (the audit CLI) import this module.
 */
import './delivery/zatca-chain.js';
import './zatca/egs-unit.js';
import './document/document.js';
import './document/mapping-sample.js';
import './document/number-claim.js';
import './purchases/purchase.js';
import './purchases/identity.js';
import './idempotency.js';
import './connect/asp-authorization.js';
import './connect/company.js';
import './connect/connect-settings.js';
import './connect/onboarding-job.js';
import './connect/source-claim.js';
import './credits/credits.js';
import './credits/jobs.js';
import './workspace/workspace.js';

export { aggregateFor, registeredCategories, streamCategory } from './aggregates.js';
