import { type ArgumentsHost, Catch, HttpException, Logger } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

interface FastifyError {
  statusCode?: number;
  code?: string;
  message: string;
}

/**
 * Errors keep Nest's shape `{statusCode, error, message}`. Fastify's own client errors (malformed JSON,
 * an empty JSON body, a body over the limit) keep their 4xx status and get that shape too; anything
 * unexpected is logged with a correlation id and answers a plain 500 that carries the same id.
 */
@Catch()
export class AllExceptionsFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  override catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof HttpException) {
      // Fastify's own client errors (malformed JSON, an empty JSON body, a bad Content-Type) and the
      // throttler's 429 reach here as an HttpException with a bare string: give them the `error` too.
      if (typeof exception.getResponse() !== 'string') return super.catch(exception, host);
      const status = exception.getStatus();
      void reply
        .status(status)
        .send({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message: exception.message });
      return;
    }
    const fastifyError = exception as FastifyError;
    const status = fastifyError?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const message =
        fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
          ? 'body is not valid JSON'
          : fastifyError.message;
      void reply
        .status(status)
        .send({ statusCode: status, error: STATUS_CODES[status] ?? 'Bad Request', message });
      return;
    }
    const correlationId = randomUUID();
    this.logger.error({ err: exception, correlationId }, 'unexpected error');
    void reply
      .status(500)
      .send({ statusCode: 500, error: 'Internal Server Error', message: 'internal error', correlationId });
  }
}
