import type { EventVerification } from '../types';

/**
 * The event's signature check at a glance: a badge when it failed (its reason as a tooltip), a discreet
 * mark when it was verified, nothing when it was not checked. `data-verification` holds the raw status.
 */
export function VerificationBadge({ verification }: { verification?: EventVerification }) {
  if (verification?.status === 'failed')
    return (
      <span
        class="badge badge-signature-failed"
        data-testid="verification-badge"
        data-verification="failed"
        title={verification.reason ?? undefined}
      >
        <span class="badge-icon" aria-hidden="true">
          ✕
        </span>
        Signature failed
      </span>
    );
  if (verification?.status === 'verified')
    return (
      <span class="verified-mark" data-testid="verification-badge" data-verification="verified">
        <span aria-hidden="true">✓</span> verified
      </span>
    );
  return null;
}
