import { changedRules, draftOf } from './ingest-rules';
import type { Endpoint } from './types';

/** The ingest rules form sends only the rules it changes, and a secret only when one is typed. */
describe('ingest rules: the PATCH body of a draft', () => {
  const endpoint = (rules: Partial<Endpoint> = {}): Endpoint => ({
    id: 'ep_1',
    user_id: 'u_1',
    name: 'Payments',
    public_token: 'tok',
    capture_url: 'http://localhost:3000/in/tok',
    is_active: true,
    metadata: {},
    verification: null,
    inbound_auth: null,
    dedup: null,
    team_id: null,
    retention_days: null,
    role: 'owner',
    created_at: '2026-11-24T10:00:00.000Z',
    ...rules,
  });
  const configured = endpoint({
    verification: { provider: 'stripe', secret: '••••9a55', mode: 'enforce', tolerance_seconds: 300 },
    inbound_auth: { type: 'header', name: 'x-token', value: '••••abcd' },
    dedup: { key: 'header:x-delivery-id', window_seconds: 60 },
  });

  it('sends nothing for an untouched draft, masked secrets included', () => {
    expect(changedRules(configured, draftOf(configured))).toEqual({});
    expect(changedRules(endpoint(), draftOf(endpoint()))).toEqual({});
  });

  it('sends a new rule with its secret and the fields of its provider only', () => {
    const saved = endpoint();
    const stripe = {
      ...draftOf(saved),
      provider: 'stripe' as const,
      secret: 'whsec_1',
      mode: 'flag' as const,
    };
    expect(changedRules(saved, stripe)).toEqual({
      verification: { provider: 'stripe', mode: 'flag', secret: 'whsec_1', tolerance_seconds: 300 },
    });

    const hmac = {
      ...draftOf(saved),
      provider: 'hmac' as const,
      secret: 's3cret',
      header: ' x-sig ',
      prefix: '',
    };
    expect(changedRules(saved, hmac)).toEqual({
      verification: {
        provider: 'hmac',
        mode: 'enforce',
        secret: 's3cret',
        header: 'x-sig',
        algorithm: 'sha256',
        encoding: 'hex',
      },
    });
  });

  it('sends a changed rule without a secret when none is typed (the stored one is kept)', () => {
    const draft = { ...draftOf(configured), mode: 'flag' as const, authName: 'x-other' };
    expect(changedRules(configured, draft)).toEqual({
      verification: { provider: 'stripe', mode: 'flag', tolerance_seconds: 300 },
      inbound_auth: { type: 'header', name: 'x-other' },
    });
    expect(changedRules(configured, { ...draftOf(configured), authSecret: 'new-value' })).toEqual({
      inbound_auth: { type: 'header', name: 'x-token', value: 'new-value' },
    });
  });

  it('removes a rule with null, and reads and writes a dedup key of each kind', () => {
    expect(changedRules(configured, { ...draftOf(configured), provider: '', auth: '', dedup: '' })).toEqual({
      verification: null,
      inbound_auth: null,
      dedup: null,
    });
    expect(draftOf(configured)).toMatchObject({
      dedup: 'header',
      dedupField: 'x-delivery-id',
      dedupWindow: '60',
    });
    expect(
      changedRules(configured, { ...draftOf(configured), dedup: 'body', dedupField: 'data.id' }),
    ).toEqual({
      dedup: { key: 'body:data.id', window_seconds: 60 },
    });
    expect(changedRules(configured, { ...draftOf(configured), dedup: 'provider', dedupWindow: '' })).toEqual({
      dedup: { key: 'provider' },
    });
  });
});
