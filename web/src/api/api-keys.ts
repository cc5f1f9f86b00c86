import type { ApiKey, ApiKeyInput, CreatedApiKey } from '../types';
import { api } from './client';

/** The user's API keys, newest first (never the keys themselves). */
export async function listApiKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  const { api_keys } = await api<{ api_keys: ApiKey[] }>('/api/api-keys', { signal });
  return api_keys;
}

/** Creates an API key: the answer holds the key itself, which the API never shows again. */
export function createApiKey(input: ApiKeyInput): Promise<CreatedApiKey> {
  return api<CreatedApiKey>('/api/api-keys', { method: 'POST', body: input });
}

/** Revokes an API key: requests made with it are refused (401) at once. */
export async function revokeApiKey(id: string): Promise<void> {
  await api<{ ok: boolean }>(`/api/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
