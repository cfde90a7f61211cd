/**
 * Loads every aggregate module so that each registers its fold (see aggregates.ts).
 * Entry points that fold arbitrary streams (the audit CLI) import this module.
 */
import './document/document.js';
import './document/number-claim.js';
import './idempotency.js';
import './workspace/workspace.js';

export { aggregateFor, registeredCategories, streamCategory } from './aggregates.js';
