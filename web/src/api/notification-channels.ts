import type {
  ChannelTestResult,
  CreatedNotificationChannel,
  NotificationChannel,
  NotificationChannelInput,
} from '../types';
import { api } from './client';

export async function listChannels(signal?: AbortSignal): Promise<NotificationChannel[]> {
  const { channels } = await api<{ channels: NotificationChannel[] }>('/api/notification-channels', {
    signal,
  });
  return channels;
}

/** Creates a channel; a webhook channel's answer holds its signing secret, shown this once. */
export function createChannel(input: NotificationChannelInput): Promise<CreatedNotificationChannel> {
  return api<CreatedNotificationChannel>('/api/notification-channels', { method: 'POST', body: input });
}

export async function deleteChannel(id: string): Promise<void> {
  await api<{ ok: boolean }>(`/api/notification-channels/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** Sends a test message through the channel now; the answer says whether it went through. */
export function testChannel(id: string): Promise<ChannelTestResult> {
  return api<ChannelTestResult>(`/api/notification-channels/${encodeURIComponent(id)}/test`, {
    method: 'POST',
  });
}
