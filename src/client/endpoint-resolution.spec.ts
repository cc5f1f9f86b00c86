import type { Endpoint } from './api-client';
import { resolveEndpoint } from './endpoint-resolution';

let made = 0;
function endpoint(name: string): Endpoint {
  made += 1;
  const id = `0b7a1c9e-6a43-4d0e-9d3f-${String(made).padStart(12, '0')}`;
  return {
    id,
    name,
    user_id: 'c7d0e0a8-1f1e-4a57-9c1b-2f4f3f0f6c11',
    team_id: null,
    role: 'owner',
    retention_days: null,
    public_token: `token-${made}`,
    capture_url: `http://localhost:3000/in/token-${made}`,
    is_active: true,
    metadata: {},
    verification: null,
    inbound_auth: null,
    dedup: null,
    created_at: '2026-11-23T10:00:00.000Z',
  };
}

describe(resolveEndpoint.name, () => {
  const payments = endpoint('Payments');
  const github = endpoint('GitHub');
  const endpoints = [payments, github];

  it('finds an endpoint by its id, in any case', () => {
    expect(resolveEndpoint(endpoints, github.id)).toBe(github);
    expect(resolveEndpoint(endpoints, github.id.toUpperCase())).toBe(github);
  });

  it('finds an endpoint by its exact name', () => {
    expect(resolveEndpoint(endpoints, 'Payments')).toBe(payments);
  });

  it('says which endpoint it did not find, and where the endpoints are listed', () => {
    expect(() => resolveEndpoint(endpoints, 'payments')).toThrow(
      'endpoint not found: payments (see hooktrail endpoints list)',
    );
    expect(() => resolveEndpoint([], payments.id)).toThrow(
      `endpoint not found: ${payments.id} (see hooktrail endpoints list)`,
    );
  });

  it('refuses a name that several endpoints share, naming their ids', () => {
    const twin = endpoint('Payments');
    expect(() => resolveEndpoint([...endpoints, twin], 'Payments')).toThrow(
      `2 endpoints are named "Payments" (${payments.id}, ${twin.id}): use an id`,
    );
  });

  it('prefers the id when a name looks like another endpoint id', () => {
    const impostor = endpoint(payments.id);
    expect(resolveEndpoint([impostor, payments], payments.id)).toBe(payments);
  });
});
