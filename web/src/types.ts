import type { components } from '../../src/generated/openapi';

/**
 * The API's types are generated from its OpenAPI document (docs/openapi.json → src/generated/openapi.ts,
 * `npm run openapi`); here they get the names the dashboard uses. Below them: what the document cannot
 * describe (the live stream's messages) and what only the dashboard has.
 */
type Schemas = components['schemas'];

export type User = Schemas['UserDto'];
export type Session = Schemas['AuthSessionDto'];

/** The provider's signature check, its secret masked. */
export type Verification = Schemas['VerificationDto'];
export type VerificationProvider = Verification['provider'];

export type Endpoint = Schemas['EndpointDto'];
/** An endpoint as GET /api/endpoints/:id answers it. */
export type EndpointWithDestinations = Endpoint &
  Pick<Schemas['EndpointWithDestinationsDto'], 'destinations'>;
/** What PATCH of an endpoint takes besides its ingest rules: team_id null is personal, retention_days null the plan's. */
export type EndpointSettings = Pick<
  Schemas['UpdateEndpointDto'],
  'name' | 'is_active' | 'team_id' | 'retention_days'
>;
export type Destination = Schemas['DestinationDto'];
/** A destination filter (Hookdeck-style, checked by the server: a bad rule is a 400 naming its path). */
export type FilterRule = NonNullable<Destination['filter']>;
export type InboundAuth = Schemas['BasicInboundAuthDto'] | Schemas['HeaderInboundAuthDto'];
export type Dedup = Schemas['DedupDto'];

/**
 * What PATCH of an endpoint takes for its ingest rules: null removes one, absent keeps it. A secret left
 * out keeps the stored one, and a default left out applies.
 */
export interface IngestRulesInput {
  verification?: Schemas['VerificationInputDto'] | null;
  inbound_auth?: Schemas['BasicInboundAuthInputDto'] | Schemas['HeaderInboundAuthInputDto'] | null;
  dedup?: Dedup | null;
}

type HookEvent = Schemas['EventDto'];
export type EventVerification = Schemas['EventVerificationDto'];
export type EventWithDeliveries = Schemas['EventWithDeliveriesDto'];
/**
 * An event as the live stream sends it: `event.created` has the id, endpoint_id, status, verification,
 * method, source_ip, received_at and, when available, the body; `event.updated` the first three only.
 */
export type EventSummary = Pick<HookEvent, 'id' | 'endpoint_id' | 'status'> & Partial<HookEvent>;
export type Delivery = Schemas['DeliveryDto'];
export type DeliveryAttempt = Schemas['DeliveryAttemptDto'];
export type Pagination = Schemas['PaginationDto'];
export type EventRoute = Schemas['EventRouteDto'];
export type FilterVerdict = Schemas['FilterVerdictDto'];
export type BulkReplay = Schemas['BulkReplayDto'];
export type ReplayResult = Schemas['ReplayResultDto'];

export type ApiKey = Schemas['ApiKeyDto'];
export type ApiKeyInput = Schemas['CreateApiKeyDto'];
/** A new API key with the key itself, which the API answers this once. */
export type CreatedApiKey = Schemas['CreatedApiKeyResponseDto'];

export {
  pathsApiEndpointsIdEventsGetParametersQueryStatusValues as EVENT_STATUSES,
  pathsApiEndpointsIdEventsGetParametersQueryVerificationValues as VERIFICATION_STATUSES,
  verificationDtoProviderValues as VERIFICATION_PROVIDERS,
  verificationDtoAlgorithmValues as HMAC_ALGORITHMS,
  verificationDtoEncodingValues as HMAC_ENCODINGS,
  apiKeyDtoScopeValues as API_KEY_SCOPES,
  notificationChannelDtoTypeValues as CHANNEL_TYPES,
  notificationChannelDtoEventsValues as NOTIFICATION_EVENTS,
  endpointStatsDtoWindowValues as STATS_WINDOWS,
  issueDtoStatusValues as ISSUE_STATUSES,
} from '../../src/generated/openapi';

/** The events list's filters, as kept in the hash. */
export interface EventFilters {
  status: string;
  /** A verification status, or '' for any. */
  verification: string;
  /** ISO 8601, or '' for none. */
  from: string;
  q: string;
  page: number;
}

/** A destination's failures of one kind, grouped. */
export type Issue = Schemas['IssueDto'];
/** An issue as GET /api/issues/:iid answers it: with the AI's diagnosis (null on the free plan). */
export type IssueWithDiagnosis = Schemas['IssueDetailDto'];

export type NotificationChannel = Schemas['NotificationChannelDto'];
export type NotificationChannelInput = Schemas['CreateNotificationChannelDto'];
/** A new channel: a webhook channel's signing secret is in this answer only. */
export type CreatedNotificationChannel = Schemas['CreatedNotificationChannelResponseDto'];
export type ChannelTestResult = Schemas['NotificationTestResultDto'];

export type EndpointStats = Schemas['EndpointStatsDto'];
export type StatsBucket = Schemas['StatsBucketDto'];
export type DestinationStats = Schemas['DestinationStatsDto'];
export type StatsWindow = EndpointStats['window'];

/** A team as its member sees it: with the caller's role in it and how many members it has. */
export type Team = Schemas['TeamDto'];
/** A role in a team; on an endpoint, the caller's role there (`owner` of one's own endpoints). */
export type Role = Team['role'];
export type TeamMember = Schemas['TeamMemberDto'];
/** A pending invitation (the mail's token is never in the API's answers). */
export type Invitation = Schemas['TeamInvitationDto'];
export type InvitationInput = Schemas['CreateTeamInvitationDto'];

/** One write through the API: who, what, to what, from where, and the request's changes (secrets removed). */
export type AuditEntry = Schemas['AuditEntryDto'];
/** A page of the audit log, newest first. */
export type AuditPage = Schemas['AuditLogResponseDto'];

export {
  /** The roles, weakest first: each may do everything the ones before it may. */
  teamDtoRoleValues as ROLES,
  createTeamInvitationDtoRoleValues as INVITABLE_ROLES,
} from '../../src/generated/openapi';
