import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IS_PUBLIC } from '../src/common/decorators/public.decorator';
import { api } from './support/api-client';
import { openApiDrift } from './support/openapi-document';
import { startTestApp, type TestApp } from './support/test-app';

interface Route {
  method: string;
  path: string;
  isPublic: boolean;
  hasBody: boolean;
}

/** Every route the Nest controllers of the running app declare (the capture URL and static files are plain Fastify routes). */
function declaredRoutes(sut: TestApp): Route[] {
  const routes: Route[] = [];
  for (const module of sut.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name as keyof object] as object;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined || name === 'constructor') continue;
        const path =
          `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')].filter(Boolean).join('/')}`
            .replace(/\/+/g, '/')
            .replace(/\/$/, '')
            .replace(/:(\w+)/g, '{$1}');
        const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {};
        routes.push({
          method: RequestMethod[method].toLowerCase(),
          path: path || '/',
          isPublic: Boolean(
            Reflect.getMetadata(IS_PUBLIC, handler) ?? Reflect.getMetadata(IS_PUBLIC, controller),
          ),
          hasBody: Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.BODY}:`)),
        });
      }
    }
  }
  return routes;
}

describe('OpenAPI document', () => {
  let sut: TestApp;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let document: any;
  let routes: Route[];

  beforeAll(async () => {
    sut = await startTestApp();
    document = (await api(sut.url, 'GET', '/docs-json')).body;
    routes = declaredRoutes(sut);
  });
  afterAll(() => sut.close());

  it('serves Swagger UI at /docs with the bearer scheme', async () => {
    const page = await fetch(`${sut.url}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('declares the order of the Swagger UI groups: auth, endpoints, events first, health and metrics last, each group used declared', () => {
    const declared = (document.tags as { name: string }[]).map((tag) => tag.name);
    expect(declared.slice(0, 3)).toEqual(['auth', 'endpoints', 'events']);
    expect(declared.slice(-2)).toEqual(['health', 'metrics']);
    // A group no tag declares would be shown after metrics; a declared one no route uses would be empty.
    const used = new Set<string>();
    for (const operations of Object.values(document.paths) as Record<string, { tags?: string[] }>[])
      for (const operation of Object.values(operations))
        for (const tag of operation.tags ?? []) used.add(tag);
    expect([...declared].sort()).toEqual([...used].sort());
  });

  it('finds the routes of every feature', () => {
    const paths = routes.map((route) => `${route.method} ${route.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'post /api/auth/register',
        'get /api/endpoints',
        'post /api/endpoints/{id}/destinations',
        'get /api/endpoints/{id}/events',
        'post /api/endpoints/{id}/events/{eId}/replay',
        'get /health',
      ]),
    );
  });

  it('documents every route with a summary, its responses and, unless public, the bearer scheme and a 401', () => {
    const problems: string[] = [];
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method];
      const name = `${route.method.toUpperCase()} ${route.path}`;
      if (!operation) {
        problems.push(`${name} is missing from the document`);
        continue;
      }
      if (!operation.summary) problems.push(`${name} has no summary`);
      const statuses = Object.keys(operation.responses ?? {});
      if (!statuses.some((status) => status.startsWith('2')))
        problems.push(`${name} documents no success response`);
      if (route.hasBody && !operation.requestBody?.content?.['application/json']?.schema)
        problems.push(`${name} documents no request body schema`);
      if (!route.isPublic) {
        if (!operation.security?.some((scheme: Record<string, unknown>) => 'bearer' in scheme))
          problems.push(`${name} does not declare the bearer scheme`);
        if (!statuses.includes('401')) problems.push(`${name} does not document 401`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('documents the success response body of every route that returns JSON', () => {
    const problems: string[] = [];
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method];
      const success = Object.entries(operation?.responses ?? {}).find(([status]) => status.startsWith('2'));
      const content = (success?.[1] as { content?: Record<string, { schema?: unknown }> } | undefined)
        ?.content;
      if (route.path.startsWith('/api') && !content)
        problems.push(`${route.method.toUpperCase()} ${route.path} has no response schema`);
    }
    expect(problems).toEqual([]);
  });

  describe('the committed document (docs/openapi.json)', () => {
    const root = join(__dirname, '..');
    const committed = () => JSON.parse(readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')) as object;

    it('is the document of the running code', () => {
      expect(openApiDrift(document, committed())).toEqual([]);
    });

    it('is told apart from a document whose route or schema changed', () => {
      const changed = JSON.parse(JSON.stringify(document));
      delete changed.paths['/api/api-keys'].get;
      changed.components.schemas.EventDto.properties.method.type = 'integer';
      changed.paths['/api/new'] = {};
      expect(openApiDrift(changed, committed())).toEqual([
        'paths./api/api-keys.get: in the committed document only',
        'paths./api/new: in the running code only',
        'components.schemas.EventDto.properties.method.type: "integer" in the running code, "string" committed',
      ]);
    });

    it('matches the built service and the generated TypeScript types (npm run openapi -- --check)', async () => {
      await expect(
        promisify(execFile)(process.execPath, ['scripts/openapi.js', '--check'], { cwd: root }),
      ).resolves.toMatchObject({ stderr: '' });
    });
  });
});
