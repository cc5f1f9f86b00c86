import type { Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  type ApiPropertyOptions,
  getSchemaPath,
  IntersectionType,
  OmitType,
  PartialType,
  PickType,
} from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import {
  dedupError,
  inboundAuthError,
  verificationError,
  type DedupSettings,
  type InboundAuthInput,
  type VerificationInput,
} from '../../ingest/ingest-rules';
import { HMAC_ALGORITHMS, HMAC_ENCODINGS, VERIFICATION_PROVIDERS } from '../../ingest/verification';
import { IsValidBy } from '../../common/dto/fields';

export class VerificationDto {
  @ApiProperty({ enum: VERIFICATION_PROVIDERS })
  provider!: (typeof VERIFICATION_PROVIDERS)[number];
  /**
   * The provider's signing secret (1 to 1024 characters). Write-only: answered as "••••" and its last 4
   * characters. On PATCH it may be left out to keep the stored one (same provider).
   * @example whsec_5f0c6f0e1f7a4c1b
   */
  secret!: string;
  /** `enforce` (default): a capture that fails is answered 401, stored, never forwarded; `flag`: marked only. */
  @ApiProperty({ enum: ['flag', 'enforce'], default: 'enforce' })
  mode!: 'flag' | 'enforce';
  /** Stripe, Slack, Standard Webhooks: how old (or early) a signed timestamp may be, in seconds. */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 86400, default: 300 })
  tolerance_seconds?: number;
  /** hmac: the header that carries the signature (lower case). @example x-signature */
  header?: string;
  /** hmac: the HMAC's hash. */
  @ApiPropertyOptional({ enum: HMAC_ALGORITHMS, default: 'sha256' })
  algorithm?: (typeof HMAC_ALGORITHMS)[number];
  /** hmac: how the header encodes the HMAC. */
  @ApiPropertyOptional({ enum: HMAC_ENCODINGS, default: 'hex' })
  encoding?: (typeof HMAC_ENCODINGS)[number];
  /** hmac: text before the HMAC in the header, such as `sha256=`. */
  prefix?: string;
}

/**
 * Verification as POST and PATCH take it: `secret` may be left out on PATCH (the stored one is kept, same
 * provider), and `mode` defaults to `enforce`.
 */
export class VerificationInputDto extends IntersectionType(
  OmitType(VerificationDto, ['secret', 'mode'] as const),
  PartialType(PickType(VerificationDto, ['secret', 'mode'] as const)),
) {}

/** Every capture carries HTTP Basic credentials. */
export class BasicInboundAuthDto {
  @ApiProperty({ enum: ['basic'] })
  type!: 'basic';
  /** @example stripe */
  username!: string;
  /** Write-only: answered as "••••" and its last 4 characters. */
  password!: string;
}

/** Every capture carries a header `name` whose value is `value`. */
export class HeaderInboundAuthDto {
  @ApiProperty({ enum: ['header'] })
  type!: 'header';
  /** The header's name (lower case). @example x-webhook-token */
  name!: string;
  /** Write-only: answered as "••••" and its last 4 characters. */
  value!: string;
}

/** HTTP Basic as POST and PATCH take it: `password` may be left out on PATCH to keep the stored one. */
export class BasicInboundAuthInputDto extends IntersectionType(
  OmitType(BasicInboundAuthDto, ['password'] as const),
  PartialType(PickType(BasicInboundAuthDto, ['password'] as const)),
) {}

/** A header as POST and PATCH take it: `value` may be left out on PATCH to keep the stored one. */
export class HeaderInboundAuthInputDto extends IntersectionType(
  OmitType(HeaderInboundAuthDto, ['value'] as const),
  PartialType(PickType(HeaderInboundAuthDto, ['value'] as const)),
) {}

/** The OpenAPI schema of one of `byType`'s models, told apart by their `type` (a nullable tagged union). */
export function taggedUnion(
  byType: Record<string, Type>,
): Pick<ApiPropertyOptions, 'oneOf' | 'discriminator'> {
  return {
    oneOf: Object.values(byType).map((model) => ({ $ref: getSchemaPath(model) })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        Object.entries(byType).map(([type, model]) => [type, getSchemaPath(model)]),
      ),
    },
  };
}

export class DedupDto {
  /**
   * Where the id of a delivery is read: `provider` (the verification provider's own id: Stripe body `id`,
   * GitHub `x-github-delivery`, Shopify `x-shopify-webhook-id`, Slack body `event_id`, Standard Webhooks
   * `webhook-id`), `header:<name>` or `body:<dot.path>`. @example provider
   */
  key!: string;
  /** A repeat within this many seconds is not stored again (1 to 604800). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 604800, default: 86400 })
  window_seconds?: number;
}

const sent = (_dto: object, value: unknown) => value !== undefined;

/** The ingest rules of an endpoint, on POST and PATCH: absent leaves a rule as it is, null removes it. */
@ApiExtraModels(BasicInboundAuthInputDto, HeaderInboundAuthInputDto)
export class IngestRuleFieldsDto {
  /** Check the provider's signature on the raw body; null: not checked. */
  @ApiPropertyOptional({
    type: VerificationInputDto,
    nullable: true,
    example: { provider: 'stripe', secret: 'whsec_5f0c6f0e1f7a4c1b', mode: 'enforce' },
  })
  @ValidateIf(sent)
  @IsValidBy(verificationError)
  verification?: VerificationInput | null;

  /** A credential every capture must carry (else 401, nothing stored); null: none. */
  @ApiPropertyOptional({
    ...taggedUnion({ basic: BasicInboundAuthInputDto, header: HeaderInboundAuthInputDto }),
    nullable: true,
    example: { type: 'header', name: 'x-webhook-token', value: 'a-long-random-value' },
  })
  @ValidateIf(sent)
  @IsValidBy(inboundAuthError)
  inbound_auth?: InboundAuthInput | null;

  /** Answer a provider's re-delivery with the first event instead of storing it again; null: off. */
  @ApiPropertyOptional({
    type: DedupDto,
    nullable: true,
    example: { key: 'header:x-delivery-id', window_seconds: 86400 },
  })
  @ValidateIf(sent)
  @IsValidBy(dedupError)
  dedup?: DedupSettings | null;
}
