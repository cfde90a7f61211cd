/**
 * The compliance identifiers of the status object (docs/api/unify.md): the business process (ProfileID)
 * and specification (CustomizationID) identifiers the generated XML carries, for the Peppol
 * countries (UAE, Belgium, Germany); both null elsewhere.
 */
import type { ArtifactDocumentType } from './core-document.js';
import { resolveDocumentType } from './normalize.js';
import { peppolBisSpecification } from './peppol-bis.js';
import { pintAeIdentifiers } from './pint-ae.js';

export interface ComplianceIdentifiers {
  businessProcessIdentifier: string | null;
  specificationIdentifier: string | null;
}

export function complianceIdentifiers(country: string, documentType: ArtifactDocumentType): ComplianceIdentifiers {
  switch (country.trim().toUpperCase()) {
    case 'AE': {
      const ids = pintAeIdentifiers(resolveDocumentType(documentType));
      return { businessProcessIdentifier: ids.profileId, specificationIdentifier: ids.customizationId };
    }
    case 'BE':
    case 'DE': {
      // The identifiers the XML carries: BIS Billing (Belgium), XRechnung 3.0 (Germany), BIS Self-Billing (self-billed).
      const ids = peppolBisSpecification(country.trim().toUpperCase(), resolveDocumentType(documentType));
      return { businessProcessIdentifier: ids.profileId, specificationIdentifier: ids.customizationId };
    }
    default:
      return { businessProcessIdentifier: null, specificationIdentifier: null };
  }
}
