import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule, workerPlacement } from './app.module';
import { loadEnvironment } from './config/environment';

/**
 * The groups of Swagger UI, in the order it shows them (it follows the document's `tags`; without them it
 * shows them in the order the routes were registered, health and metrics first): the first steps (log in,
 * make an endpoint, read its events), then the rest of the work on endpoints, the account's and teams'
 * settings, and the operator's routes last.
 */
export const OPENAPI_TAGS: readonly { name: string; description: string }[] = [
  { name: 'auth', description: 'Register, log in, refresh and log out' },
  { name: 'endpoints', description: 'Endpoints and their capture URLs' },
  { name: 'events', description: 'Captured events: list, search, inspect, replay, the live stream' },
  { name: 'destinations', description: "An endpoint's HTTPS destinations" },
  { name: 'issues', description: 'Failures grouped into issues, and auto-pause' },
  { name: 'ai', description: 'Explain an event, write its types and handler, diagnose a failure' },
  { name: 'stats', description: 'Delivery statistics' },
  { name: 'notification-channels', description: 'Where issue notifications go' },
  { name: 'teams', description: 'Teams, members and invitations' },
  { name: 'audit-log', description: 'Every write, who made it and when' },
  { name: 'api-keys', description: 'API keys for scripts, CI and the hooktrail CLI' },
  { name: 'health', description: 'Liveness and readiness' },
  { name: 'metrics', description: 'Prometheus metrics' },
];

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Hooktrail API')
    .setDescription(
      'Capture webhooks at permanent URLs, forward them to your HTTPS destinations with retries, inspect, ' +
        'replay and explain them. Authenticate with POST /api/auth/login, then paste the accessToken (or an ' +
        'API key, htk_...) in "Authorize".',
    )
    .setVersion('0.1.0')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description: 'An access token (POST /api/auth/login) or an API key (htk_...)',
    });
  for (const tag of OPENAPI_TAGS) builder.addTag(tag.name, tag.description);
  return SwaggerModule.createDocument(app, builder.build());
}

/** Swagger UI at /docs, the document at /docs-json. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
}

/**
 * The document of the API without a running service: the application is built in Nest's preview mode, which
 * reads the modules and controllers but creates no provider, so nothing connects to PostgreSQL or Redis.
 * scripts/openapi.js writes it to docs/openapi.json.
 */
export async function previewOpenApiDocument(): Promise<OpenAPIObject> {
  const env = loadEnvironment({});
  const app = await NestFactory.create(
    AppModule.forRoot(env, { workers: workerPlacement('api'), processMetrics: false }),
    new FastifyAdapter(),
    {
      preview: true,
      logger: false,
    },
  );
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
