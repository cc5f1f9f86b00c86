import type { NotificationEventType } from './notification-events';

export const CHANNEL_TYPES = ['email', 'slack', 'discord', 'webhook'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** `ok`: delivering; `failing`: its last message was dropped after every retry; `disabled`: no longer sent to. */
export type ChannelStatus = 'ok' | 'failing' | 'disabled';

/** A notification channel as stored (its secret still sealed). */
export interface NotificationChannel {
  id: string;
  userId: string;
  type: ChannelType;
  target: string;
  events: NotificationEventType[];
  sealedSecret: string | null;
  status: ChannelStatus;
  lastError: string | null;
  lastSentAt: Date | null;
  failingSince: Date | null;
  droppedMessages: number;
  createdAt: Date;
}

/** One notification waiting in a channel's outbox. */
export interface PendingNotification {
  id: string;
  type: NotificationEventType;
  data: Record<string, unknown>;
  createdAt: Date;
}
