import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule, workerPlacement } from './app.module';
import { loadEnvironment } from './config/environment';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
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
    })
    .build();
  return SwaggerModule.createDocument(app, config);
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
