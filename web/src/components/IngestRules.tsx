import { useEffect, useRef, useState } from 'preact/hooks';
import { updateIngestRules } from '../api/ingest-rules';
import { canWrite } from '../roles';
import {
  changedRules,
  credentialOf,
  dedupKeyParts,
  draftOf,
  type DedupKind,
  type RulesDraft,
  TIMESTAMP_PROVIDERS,
} from '../ingest-rules';
import {
  type Dedup,
  type Endpoint,
  HMAC_ALGORITHMS,
  HMAC_ENCODINGS,
  type InboundAuth,
  type Verification,
  VERIFICATION_PROVIDERS,
  type VerificationProvider,
} from '../types';
import { Alert } from './Alert';
import { InputField, SelectField } from './Field';

const PROVIDER_LABELS: Record<VerificationProvider, string> = {
  stripe: 'Stripe',
  github: 'GitHub',
  shopify: 'Shopify',
  slack: 'Slack',
  standard_webhooks: 'Standard Webhooks',
  hmac: 'Generic HMAC',
};

const PROVIDER_OPTIONS: readonly (readonly [RulesDraft['provider'], string])[] = [
  ['', 'None: no check'],
  ...VERIFICATION_PROVIDERS.map((provider) => [provider, PROVIDER_LABELS[provider]] as const),
];
const MODE_OPTIONS = [
  ['enforce', 'Enforce: answer 401, do not forward'],
  ['flag', 'Flag: store, forward and mark it'],
] as const;
const AUTH_OPTIONS = [
  ['', 'None'],
  ['basic', 'HTTP Basic'],
  ['header', 'A secret header'],
] as const;
const DEDUP_OPTIONS: readonly (readonly [DedupKind, string])[] = [
  ['', 'Off'],
  ['provider', 'The provider’s delivery id'],
  ['header', 'A header'],
  ['body', 'A body field'],
];
const asOptions = <T extends string>(values: readonly T[]) => values.map((value) => [value, value] as const);

function describeVerification(rule: Verification | null): string {
  if (rule === null) return 'Not checked';
  const parts = [
    PROVIDER_LABELS[rule.provider],
    rule.mode === 'enforce'
      ? 'enforced (a request that fails gets 401 and is not forwarded)'
      : 'flagged (a request that fails is stored, forwarded and marked)',
  ];
  if (TIMESTAMP_PROVIDERS.has(rule.provider)) parts.push(`timestamps within ${rule.tolerance_seconds} s`);
  if (rule.provider === 'hmac')
    parts.push(
      `${rule.algorithm} in ${rule.encoding} in ${rule.header}${rule.prefix ? ` after “${rule.prefix}”` : ''}`,
    );
  parts.push(`secret ${rule.secret}`);
  return parts.join(', ');
}

function describeInboundAuth(auth: InboundAuth | null): string {
  if (auth === null) return 'None: anyone with the capture URL can send';
  const { name, secret } = credentialOf(auth);
  return auth.type === 'basic' ? `HTTP Basic as ${name}, password ${secret}` : `Header ${name}: ${secret}`;
}

function describeDedup(dedup: Dedup | null): string {
  if (dedup === null) return 'Off';
  const [kind, field] = dedupKeyParts(dedup.key);
  const by = kind === 'provider' ? 'the provider’s delivery id' : `${kind} ${field}`;
  return `By ${by}: a repeat within ${dedup.window_seconds} s is answered with the first event`;
}

interface Props {
  endpoint: Endpoint;
  onSaved: (endpoint: Endpoint) => void;
}

/** What every capture is checked for before it is stored: a provider signature, a credential, repeats. */
export function IngestRules({ endpoint, onSaved }: Props) {
  const [draft, setDraft] = useState<RulesDraft | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');
  const form = useRef<HTMLFormElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const refocusEdit = useRef(false);
  const editing = draft !== null;

  useEffect(() => {
    if (editing) form.current?.querySelector('select')?.focus();
    else if (refocusEdit.current) {
      refocusEdit.current = false;
      editButton.current?.focus();
    }
  }, [editing]);

  const open = () => {
    setError(null);
    setDraft(draftOf(endpoint));
  };
  const close = () => {
    refocusEdit.current = true;
    setDraft(null);
  };
  const set = (changes: Partial<RulesDraft>) => setDraft((current) => current && { ...current, ...changes });

  // Never rejects (failures are shown through setError), so the form fires and forgets it.
  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    const changes = changedRules(endpoint, draft);
    if (Object.keys(changes).length === 0) return close();
    setSaving(true);
    setError(null);
    try {
      onSaved(await updateIngestRules(endpoint.id, changes));
      setAnnouncement('Ingest rules saved.');
      close();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  return (
    <section class="card" aria-labelledby="ingest-heading">
      <div class="card-head">
        <h2 id="ingest-heading">Ingest rules</h2>
        <span class="muted small">Checked on every capture, before it is stored</span>
      </div>
      {draft ? (
        <form
          class="rules-form"
          ref={form}
          onSubmit={(event) => void save(event)}
          aria-label="Edit ingest rules"
        >
          <VerificationFields draft={draft} saved={endpoint.verification} set={set} />
          <InboundAuthFields draft={draft} saved={endpoint.inbound_auth} set={set} />
          <DedupFields draft={draft} set={set} />
          <div class="toolbar">
            <button type="submit" class="btn btn-primary" data-testid="save-ingest-rules" disabled={saving}>
              {saving ? 'Saving…' : 'Save rules'}
            </button>
            <button type="button" class="btn" onClick={close} disabled={saving}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <dl class="facts rules-summary">
            <div>
              <dt>Signature</dt>
              <dd data-testid="rules-verification">{describeVerification(endpoint.verification)}</dd>
            </div>
            <div>
              <dt>Inbound auth</dt>
              <dd data-testid="rules-inbound-auth">{describeInboundAuth(endpoint.inbound_auth)}</dd>
            </div>
            <div>
              <dt>Deduplication</dt>
              <dd data-testid="rules-dedup">{describeDedup(endpoint.dedup)}</dd>
            </div>
          </dl>
          {canWrite(endpoint.role) && (
            <button type="button" class="btn" ref={editButton} data-testid="edit-ingest-rules" onClick={open}>
              Edit ingest rules
            </button>
          )}
        </>
      )}
      <Alert error={error} testId="ingest-rules-error" />
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
    </section>
  );
}

interface FieldsProps {
  draft: RulesDraft;
  set: (changes: Partial<RulesDraft>) => void;
}

/** "leave empty to keep ••••abcd" when there is a stored secret to keep; else the field is required. */
function secretProps(masked: string | null): { placeholder?: string; required: boolean } {
  return masked === null
    ? { required: true }
    : { placeholder: `leave empty to keep ${masked}`, required: false };
}

function VerificationFields({ draft, saved, set }: FieldsProps & { saved: Verification | null }) {
  const { provider } = draft;
  return (
    <fieldset class="rule-set">
      <legend>Signature check</legend>
      <SelectField
        id="rules-provider"
        label="Signature provider"
        value={provider}
        options={PROVIDER_OPTIONS}
        onChange={(value) => set({ provider: value, secret: '' })}
      />
      {provider !== '' && (
        <>
          <InputField
            id="rules-secret"
            label="Signing secret"
            type="password"
            grow
            value={draft.secret}
            onInput={(secret) => set({ secret })}
            {...secretProps(saved?.provider === provider ? saved.secret : null)}
          />
          <SelectField
            id="rules-mode"
            label="When it fails"
            grow
            value={draft.mode}
            options={MODE_OPTIONS}
            onChange={(mode) => set({ mode })}
          />
        </>
      )}
      {TIMESTAMP_PROVIDERS.has(provider) && (
        <InputField
          id="rules-tolerance"
          label="Timestamp tolerance (s)"
          type="number"
          min={1}
          max={86400}
          value={draft.tolerance}
          onInput={(tolerance) => set({ tolerance })}
        />
      )}
      {provider === 'hmac' && (
        <>
          <InputField
            id="rules-header"
            label="Signature header"
            placeholder="x-signature"
            required
            value={draft.header}
            onInput={(header) => set({ header })}
          />
          <SelectField
            id="rules-algorithm"
            label="Algorithm"
            value={draft.algorithm}
            options={asOptions(HMAC_ALGORITHMS)}
            onChange={(algorithm) => set({ algorithm })}
          />
          <SelectField
            id="rules-encoding"
            label="Encoding"
            value={draft.encoding}
            options={asOptions(HMAC_ENCODINGS)}
            onChange={(encoding) => set({ encoding })}
          />
          <InputField
            id="rules-prefix"
            label="Prefix (optional)"
            placeholder="sha256="
            value={draft.prefix}
            onInput={(prefix) => set({ prefix })}
          />
        </>
      )}
    </fieldset>
  );
}

function InboundAuthFields({ draft, saved, set }: FieldsProps & { saved: InboundAuth | null }) {
  const { auth } = draft;
  const masked = saved === null || saved.type !== auth ? null : credentialOf(saved).secret;
  return (
    <fieldset class="rule-set">
      <legend>Inbound authentication</legend>
      <SelectField
        id="rules-auth"
        label="Captures must carry"
        value={auth}
        options={AUTH_OPTIONS}
        onChange={(value) => set({ auth: value, authName: '', authSecret: '' })}
      />
      {auth !== '' && (
        <>
          <InputField
            id="rules-auth-name"
            label={auth === 'basic' ? 'Username' : 'Header name'}
            placeholder={auth === 'basic' ? undefined : 'x-webhook-token'}
            required
            value={draft.authName}
            onInput={(authName) => set({ authName })}
          />
          <InputField
            id="rules-auth-secret"
            label={auth === 'basic' ? 'Password' : 'Header value'}
            type="password"
            grow
            value={draft.authSecret}
            onInput={(authSecret) => set({ authSecret })}
            {...secretProps(masked)}
          />
        </>
      )}
    </fieldset>
  );
}

function DedupFields({ draft, set }: FieldsProps) {
  const { dedup } = draft;
  return (
    <fieldset class="rule-set">
      <legend>Deduplication</legend>
      <SelectField
        id="rules-dedup"
        label="Deduplicate by"
        value={dedup}
        options={DEDUP_OPTIONS}
        onChange={(value) => set({ dedup: value, dedupField: '' })}
      />
      {(dedup === 'header' || dedup === 'body') && (
        <InputField
          id="rules-dedup-field"
          label={dedup === 'header' ? 'Id header' : 'Id body path'}
          placeholder={dedup === 'header' ? 'x-delivery-id' : 'data.id'}
          required
          value={draft.dedupField}
          onInput={(dedupField) => set({ dedupField })}
        />
      )}
      {dedup !== '' && (
        <InputField
          id="rules-dedup-window"
          label="Window (s)"
          type="number"
          min={1}
          max={604800}
          value={draft.dedupWindow}
          onInput={(dedupWindow) => set({ dedupWindow })}
        />
      )}
    </fieldset>
  );
}
