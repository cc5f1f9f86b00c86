import type { HandlerTarget } from '../ai.types';
import { isRecord, type Payload } from './payload';
import { SCHEMA_SAMPLE_ITEMS } from './schema-generator';

/** What a template needs to know of the event. */
export interface HandlerContext {
  target: HandlerTarget;
  payload: Payload;
  /** TypeScript interfaces of the payload (from the schema), and the root type's name. */
  schema: string;
  rootName: string;
  provider: string;
  eventType?: string;
}

const TOLERANCE_NOTE = 'signatures older or newer than 5 minutes are rejected (replay protection)';

function todo(context: HandlerContext, comment: string): string {
  const about = context.eventType
    ? `the ${context.provider} "${context.eventType}" event`
    : `this ${context.provider} webhook`;
  return `${comment} TODO: handle ${about} here (store it, enqueue work, ...). Keep it fast: answer 2xx, work later.`;
}

/** How the handler turns the raw body into the payload, per language. */
function jsParse(context: HandlerContext, typed: boolean): string {
  const cast = typed ? ` as ${context.rootName}` : '';
  if (context.payload.kind === 'form')
    return `Object.fromEntries(new URLSearchParams(rawBody.toString('utf8')))${cast}`;
  if (context.payload.kind === 'json') return `JSON.parse(rawBody.toString('utf8'))${cast}`;
  return `rawBody.toString('utf8')${cast}`;
}

function jsVerify(typed: boolean): string {
  const t = (annotation: string) => (typed ? annotation : '');
  return [
    `const SECRET = process.env.HOOKTRAIL_SECRET ?? '';`,
    `/** Seconds a signature stays valid: ${TOLERANCE_NOTE}. */`,
    `const TOLERANCE_SECONDS = 5 * 60;`,
    ``,
    `/** Verifies hooktrail-signature (Standard Webhooks scheme): v1,<base64 HMAC-SHA256(secret, "id.timestamp.body")>. */`,
    `function verifySignature(rawBody${t(': Buffer')}, headers${t(': Record<string, string | string[] | undefined>')})${t(': boolean')} {`,
    `  const id = String(headers['hooktrail-id'] ?? '');`,
    `  const timestamp = Number(headers['hooktrail-timestamp']);`,
    `  const signatures = String(headers['hooktrail-signature'] ?? '');`,
    `  if (!SECRET || !id || !Number.isInteger(timestamp)) return false;`,
    `  if (Math.abs(Math.floor(Date.now() / 1000) - timestamp) > TOLERANCE_SECONDS) return false;`,
    `  const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8'))`,
    `    .update(id + '.' + timestamp + '.')`,
    `    .update(rawBody)`,
    `    .digest();`,
    `  return signatures.split(' ').some((entry) => {`,
    `    const [version, signature] = entry.split(',');`,
    `    const given = Buffer.from(signature ?? '', 'base64');`,
    `    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);`,
    `  });`,
    `}`,
  ].join('\n');
}

function jsHandleEvent(context: HandlerContext, typed: boolean): string {
  return [
    `async function handleEvent(event${typed ? `: ${context.rootName}` : ''})${typed ? ': Promise<void>' : ''} {`,
    `  ${todo(context, '//')}`,
    `  console.log('received webhook', ${context.payload.kind === 'json' ? `typeof event === 'object' && event !== null && 'id' in event ? event.id : ''` : `''`});`,
    `}`,
  ].join('\n');
}

function jsHeader(context: HandlerContext, typed: boolean, imports: string[]): string {
  const schema = typed ? `\n${context.schema.trim()}\n` : '';
  return [...imports, schema, jsVerify(typed), '', jsHandleEvent(context, typed)].join('\n');
}

function express(context: HandlerContext, typed: boolean): string {
  const imports = typed
    ? [
        `import express, { type Request, type Response } from 'express';`,
        `import { createHmac, timingSafeEqual } from 'node:crypto';`,
      ]
    : [
        `const express = require('express');`,
        `const { createHmac, timingSafeEqual } = require('node:crypto');`,
      ];
  const params = typed ? '(req: Request, res: Response)' : '(req, res)';
  return [
    jsHeader(context, typed, imports),
    ``,
    `const app = express();`,
    ``,
    `// express.raw keeps the exact bytes: the signature is over the raw body, not re-serialised JSON.`,
    `app.all('/webhooks/hooktrail', express.raw({ type: () => true, limit: '10mb' }), async ${params} => {`,
    `  const rawBody${typed ? ': Buffer' : ''} = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);`,
    `  if (!verifySignature(rawBody, req.headers)) {`,
    `    res.status(401).json({ error: 'invalid or expired signature' });`,
    `    return;`,
    `  }`,
    `  let event${typed ? `: ${context.rootName}` : ''};`,
    `  try {`,
    `    event = ${jsParse(context, typed)};`,
    `  } catch {`,
    `    res.status(400).json({ error: 'the body is not valid JSON' });`,
    `    return;`,
    `  }`,
    `  try {`,
    `    await handleEvent(event);`,
    `    res.status(200).json({ received: true });`,
    `  } catch (error) {`,
    `    console.error('webhook handling failed', error);`,
    `    res.status(500).json({ error: 'internal error' });`,
    `  }`,
    `});`,
    ``,
    `app.listen(Number(process.env.PORT ?? 3000));`,
    ``,
  ].join('\n');
}

function fastify(context: HandlerContext, typed: boolean): string {
  const imports = typed
    ? [`import Fastify from 'fastify';`, `import { createHmac, timingSafeEqual } from 'node:crypto';`]
    : [
        `const Fastify = require('fastify');`,
        `const { createHmac, timingSafeEqual } = require('node:crypto');`,
      ];
  return [
    jsHeader(context, typed, imports),
    ``,
    `const app = Fastify({ bodyLimit: 10 * 1024 * 1024 });`,
    `// Keep the exact bytes of every body: the signature is over the raw body, not re-serialised JSON.`,
    `app.removeAllContentTypeParsers();`,
    `app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));`,
    ``,
    `app.all('/webhooks/hooktrail', async (request, reply) => {`,
    `  const rawBody${typed ? ': Buffer' : ''} = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);`,
    `  if (!verifySignature(rawBody, request.headers)) return reply.code(401).send({ error: 'invalid or expired signature' });`,
    `  let event${typed ? `: ${context.rootName}` : ''};`,
    `  try {`,
    `    event = ${jsParse(context, typed)};`,
    `  } catch {`,
    `    return reply.code(400).send({ error: 'the body is not valid JSON' });`,
    `  }`,
    `  try {`,
    `    await handleEvent(event);`,
    `    return reply.code(200).send({ received: true });`,
    `  } catch (error) {`,
    `    request.log.error(error, 'webhook handling failed');`,
    `    return reply.code(500).send({ error: 'internal error' });`,
    `  }`,
    `});`,
    ``,
    `app.listen({ port: Number(process.env.PORT ?? 3000), host: '0.0.0.0' });`,
    ``,
  ].join('\n');
}

function nextjs(context: HandlerContext, typed: boolean): string {
  const imports = [`import { createHmac, timingSafeEqual } from 'node:crypto';`];
  return [
    `// app/webhooks/hooktrail/route.${typed ? 'ts' : 'js'} (Next.js App Router)`,
    jsHeader(context, typed, imports),
    ``,
    `export const runtime = 'nodejs';`,
    ``,
    `export async function POST(request${typed ? ': Request' : ''})${typed ? ': Promise<Response>' : ''} {`,
    `  // Read the raw bytes: the signature is over the raw body, not re-serialised JSON.`,
    `  const rawBody = Buffer.from(await request.arrayBuffer());`,
    `  if (!verifySignature(rawBody, Object.fromEntries(request.headers))) {`,
    `    return Response.json({ error: 'invalid or expired signature' }, { status: 401 });`,
    `  }`,
    `  let event${typed ? `: ${context.rootName}` : ''};`,
    `  try {`,
    `    event = ${jsParse(context, typed)};`,
    `  } catch {`,
    `    return Response.json({ error: 'the body is not valid JSON' }, { status: 400 });`,
    `  }`,
    `  try {`,
    `    await handleEvent(event);`,
    `    return Response.json({ received: true });`,
    `  } catch (error) {`,
    `    console.error('webhook handling failed', error);`,
    `    return Response.json({ error: 'internal error' }, { status: 500 });`,
    `  }`,
    `}`,
    ``,
  ].join('\n');
}

/**
 * The body's fields when it is a record of them: a form, or a JSON object of at most SCHEMA_SAMPLE_ITEMS keys
 * (one of more is a map keyed by ids, as the schema types it). Empty for any other body.
 */
function recordFields(payload: Payload): [string, unknown][] {
  if (payload.kind === 'form') return Object.entries(payload.fields);
  if (payload.kind !== 'json' || !isRecord(payload.value)) return [];
  const fields = Object.entries(payload.value);
  return fields.length <= SCHEMA_SAMPLE_ITEMS ? fields : [];
}

/** A JSON body that is not a record of fields (an array, a map, a scalar): its value, for its type. */
function unfieldedJson(payload: Payload): { value: unknown } | undefined {
  if (payload.kind !== 'json' || recordFields(payload).length > 0) return undefined;
  return { value: payload.value };
}

function pythonType(value: unknown): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list[Any]';
  if (value === null) return 'Any | None';
  return 'dict[str, Any]';
}

function fastapi(context: HandlerContext): string {
  const fields = recordFields(context.payload).filter(([key]) => /^[A-Za-z_]\w*$/.test(key));
  const json = unfieldedJson(context.payload);
  const typedDict = fields.length
    ? [
        `class ${context.rootName}(TypedDict, total=False):`,
        ...fields.map(([key, value]) => `    ${key}: ${pythonType(value)}`),
      ]
    : [`${context.rootName} = ${json ? pythonType(json.value) : 'dict[str, Any]'}`];
  const parse =
    context.payload.kind === 'form'
      ? `dict(urllib.parse.parse_qsl(raw_body.decode("utf-8")))`
      : context.payload.kind === 'json'
        ? `json.loads(raw_body)`
        : `raw_body.decode("utf-8")`;
  return [
    `import base64`,
    `import hashlib`,
    `import hmac`,
    `import json`,
    `import os`,
    `import time`,
    `import urllib.parse`,
    `from typing import Any, TypedDict`,
    ``,
    `from fastapi import FastAPI, HTTPException, Request`,
    ``,
    `SECRET = os.environ.get("HOOKTRAIL_SECRET", "")`,
    `# Seconds a signature stays valid: ${TOLERANCE_NOTE}.`,
    `TOLERANCE_SECONDS = 5 * 60`,
    ``,
    ...typedDict,
    ``,
    ``,
    `def verify_signature(raw_body: bytes, headers) -> bool:`,
    `    """hooktrail-signature (Standard Webhooks scheme): v1,<base64 HMAC-SHA256(secret, "id.timestamp.body")>."""`,
    `    message_id = headers.get("hooktrail-id", "")`,
    `    timestamp = headers.get("hooktrail-timestamp", "")`,
    `    if not SECRET or not message_id or not timestamp.isdigit():`,
    `        return False`,
    `    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:`,
    `        return False`,
    `    signed = f"{message_id}.{timestamp}.".encode() + raw_body`,
    `    expected = hmac.new(SECRET.encode("utf-8"), signed, hashlib.sha256).digest()`,
    `    for entry in headers.get("hooktrail-signature", "").split(" "):`,
    `        version, _, signature = entry.partition(",")`,
    `        try:`,
    `            given = base64.b64decode(signature)`,
    `        except ValueError:`,
    `            continue`,
    `        if version == "v1" and hmac.compare_digest(given, expected):`,
    `            return True`,
    `    return False`,
    ``,
    ``,
    `async def handle_event(event: ${context.rootName}) -> None:`,
    `    ${todo(context, '#')}`,
    `    print("received webhook", event.get("id") if isinstance(event, dict) else "")`,
    ``,
    ``,
    `app = FastAPI()`,
    ``,
    ``,
    `@app.api_route("/webhooks/hooktrail", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])`,
    `async def hooktrail_webhook(request: Request):`,
    `    raw_body = await request.body()  # the exact bytes: the signature is over the raw body`,
    `    if not verify_signature(raw_body, request.headers):`,
    `        raise HTTPException(status_code=401, detail="invalid or expired signature")`,
    `    try:`,
    `        event: ${context.rootName} = ${parse}`,
    `    except ValueError:`,
    `        raise HTTPException(status_code=400, detail="the body is not valid JSON")`,
    `    try:`,
    `        await handle_event(event)`,
    `    except Exception:`,
    `        raise HTTPException(status_code=500, detail="internal error")`,
    `    return {"received": True}`,
    ``,
    ``,
    `if __name__ == "__main__":`,
    `    import uvicorn`,
    ``,
    `    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "3000")))`,
    ``,
  ].join('\n');
}

function goType(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return '[]any';
  if (value === null) return 'any';
  return 'map[string]any';
}

function goField(key: string): string {
  const name = key
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => (part.toLowerCase() === 'id' ? 'ID' : part[0].toUpperCase() + part.slice(1)))
    .join('');
  return /^[A-Za-z]/.test(name) ? name : `Field${name}`;
}

function gin(context: HandlerContext): string {
  // A JSON body that is not a record (an array, a map) is unmarshalled into its own kind, not a struct.
  const json = unfieldedJson(context.payload);
  const struct = json
    ? [`type ${context.rootName} ${goType(json.value)}`]
    : [
        `type ${context.rootName} struct {`,
        ...recordFields(context.payload).map(
          ([key, value]) => `\t${goField(key)} ${goType(value)} \`json:"${key}"\``,
        ),
        `}`,
      ];
  const parse =
    context.payload.kind === 'json'
      ? [
          `\t\tvar event ${context.rootName}`,
          `\t\tif err := json.Unmarshal(body, &event); err != nil {`,
          `\t\t\tc.JSON(http.StatusBadRequest, gin.H{"error": "the body is not valid JSON"})`,
          `\t\t\treturn`,
          `\t\t}`,
        ]
      : [
          `\t\tevent := ${context.rootName}{}`,
          `\t\t_ = body // not JSON: read the fields from the raw body (c.Request.PostForm for forms)`,
        ];
  return [
    `package main`,
    ``,
    `import (`,
    `\t"crypto/hmac"`,
    `\t"crypto/sha256"`,
    `\t"encoding/base64"`,
    `\t"encoding/json"`,
    `\t"log"`,
    `\t"net/http"`,
    `\t"os"`,
    `\t"strconv"`,
    `\t"strings"`,
    `\t"time"`,
    ``,
    `\t"github.com/gin-gonic/gin"`,
    `)`,
    ``,
    `// toleranceSeconds: ${TOLERANCE_NOTE}.`,
    `const toleranceSeconds = 5 * 60`,
    ``,
    ...struct,
    ``,
    `// verifySignature checks hooktrail-signature (Standard Webhooks scheme):`,
    `// v1,<base64 HMAC-SHA256(secret, "id.timestamp.body")>, in constant time.`,
    `func verifySignature(secret string, body []byte, id, timestamp, signatures string) bool {`,
    `\tseconds, err := strconv.ParseInt(timestamp, 10, 64)`,
    `\tif secret == "" || id == "" || err != nil {`,
    `\t\treturn false`,
    `\t}`,
    `\tif age := time.Now().Unix() - seconds; age > toleranceSeconds || age < -toleranceSeconds {`,
    `\t\treturn false`,
    `\t}`,
    `\tmac := hmac.New(sha256.New, []byte(secret))`,
    `\tmac.Write([]byte(id + "." + timestamp + "."))`,
    `\tmac.Write(body)`,
    `\texpected := mac.Sum(nil)`,
    `\tfor _, entry := range strings.Split(signatures, " ") {`,
    `\t\tversion, signature, found := strings.Cut(entry, ",")`,
    `\t\tgiven, err := base64.StdEncoding.DecodeString(signature)`,
    `\t\tif found && version == "v1" && err == nil && hmac.Equal(given, expected) {`,
    `\t\t\treturn true`,
    `\t\t}`,
    `\t}`,
    `\treturn false`,
    `}`,
    ``,
    `func handleEvent(event ${context.rootName}) error {`,
    `\t${todo(context, '//')}`,
    `\tlog.Printf("received webhook %+v", event)`,
    `\treturn nil`,
    `}`,
    ``,
    `func main() {`,
    `\tsecret := os.Getenv("HOOKTRAIL_SECRET")`,
    `\trouter := gin.Default()`,
    `\trouter.Any("/webhooks/hooktrail", func(c *gin.Context) {`,
    `\t\tbody, err := c.GetRawData() // the exact bytes: the signature is over the raw body`,
    `\t\tif err != nil {`,
    `\t\t\tc.JSON(http.StatusBadRequest, gin.H{"error": "could not read the body"})`,
    `\t\t\treturn`,
    `\t\t}`,
    `\t\tif !verifySignature(secret, body, c.GetHeader("hooktrail-id"), c.GetHeader("hooktrail-timestamp"), c.GetHeader("hooktrail-signature")) {`,
    `\t\t\tc.JSON(http.StatusUnauthorized, gin.H{"error": "invalid or expired signature"})`,
    `\t\t\treturn`,
    `\t\t}`,
    ...parse,
    `\t\tif err := handleEvent(event); err != nil {`,
    `\t\t\tlog.Printf("webhook handling failed: %v", err)`,
    `\t\t\tc.JSON(http.StatusInternalServerError, gin.H{"error": "internal error"})`,
    `\t\t\treturn`,
    `\t\t}`,
    `\t\tc.JSON(http.StatusOK, gin.H{"received": true})`,
    `\t})`,
    `\tport := os.Getenv("PORT")`,
    `\tif port == "" {`,
    `\t\tport = "3000"`,
    `\t}`,
    `\tif err := router.Run(":" + port); err != nil {`,
    `\t\tlog.Fatal(err)`,
    `\t}`,
    `}`,
    ``,
  ].join('\n');
}

/** Complete handler code for a language and framework, verifying our signature. */
export function renderHandler(context: HandlerContext): string {
  const { language, framework } = context.target;
  const typed = language === 'typescript';
  if (language === 'python') return fastapi(context);
  if (language === 'go') return gin(context);
  if (framework === 'fastify') return fastify(context, typed);
  if (framework === 'nextjs') return nextjs(context, typed);
  return express(context, typed);
}
