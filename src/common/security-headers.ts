import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/** What the dashboard and Swagger UI load: their own scripts and styles, inline styles, data: images. */
const DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
};

/**
 * helmet's headers for a request that came over HTTPS: its defaults, which include
 * `upgrade-insecure-requests` in the CSP and Strict-Transport-Security.
 */
const OVER_HTTPS: HelmetOptions = { contentSecurityPolicy: { directives: DIRECTIVES } };

/**
 * Over plain HTTP neither: a browser told to upgrade asks for every script and stylesheet over https, which
 * the service does not serve, and shows a blank page (on any host but localhost, which browsers never
 * upgrade); an HSTS header over HTTP is ignored by browsers anyway.
 */
const OVER_PLAIN_HTTP: HelmetOptions = {
  contentSecurityPolicy: { directives: { ...DIRECTIVES, upgradeInsecureRequests: null } },
  strictTransportSecurity: false,
};

/**
 * Sends helmet's browser headers on every response of Fastify's routes, chosen by how the request came:
 * `request.protocol` is https for a TLS socket, or for X-Forwarded-Proto from a proxy Fastify trusts
 * (trustProxy, set from TRUST_PROXY), and http otherwise. Both middlewares are built once: helmet builds its
 * header values when it is called, so calling it per request (as @fastify/helmet does) costs every request.
 */
export function sendSecurityHeaders(fastify: FastifyInstance): void {
  const overHttps = helmet(OVER_HTTPS);
  const overPlainHttp = helmet(OVER_PLAIN_HTTP);
  fastify.addHook('onRequest', (request, reply, done) => {
    const headers = request.protocol === 'https' ? overHttps : overPlainHttp;
    headers(request.raw, reply.raw, (error) => done(error as Error | undefined));
  });
}
