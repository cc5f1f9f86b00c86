import { AUDITED_ROUTES, auditedRouteOf, NOT_AUDITED, RESPONSE_BODY, WRITE_METHODS } from './audit-actions';

const pathParameters = (key: string) => [...key.matchAll(/:(\w+)/g)].map((match) => match[1]);

describe('the audit table', () => {
  it.each(Object.entries(AUDITED_ROUTES))(
    '%s takes its target id from its path or its answer',
    (key, route) => {
      if (route.id.startsWith(RESPONSE_BODY)) expect(route.id.length).toBeGreaterThan(RESPONSE_BODY.length);
      else expect(pathParameters(key)).toContain(route.id);
    },
  );

  it.each(Object.entries(AUDITED_ROUTES))('%s is named <resource>.<verb>', (_key, route) => {
    expect(route.action).toMatch(/^[a-z_]+\.[a-z_]+$/);
    expect(route.target).toMatch(/^[a-z_]+$/);
  });

  it('keys every route by a write method and an /api route template, in one table only', () => {
    for (const key of [...Object.keys(AUDITED_ROUTES), ...Object.keys(NOT_AUDITED)]) {
      const [method, url] = key.split(' ');
      expect(WRITE_METHODS.has(method)).toBe(true);
      expect(url).toMatch(/^\/api\/[\w/:-]+$/);
      expect(url).not.toMatch(/\{/);
    }
    expect(Object.keys(AUDITED_ROUTES).filter((key) => key in NOT_AUDITED)).toEqual([]);
  });

  it('finds a route by method and template; reads and unknown routes are not audited', () => {
    expect(auditedRouteOf('DELETE', '/api/endpoints/:id')?.action).toBe('endpoint.deleted');
    expect(auditedRouteOf('GET', '/api/endpoints/:id')).toBeUndefined();
    expect(auditedRouteOf('POST', '/api/auth/login')).toBeUndefined();
    expect(auditedRouteOf('POST', undefined)).toBeUndefined();
    expect(auditedRouteOf('POST', 'constructor')).toBeUndefined();
  });
});
