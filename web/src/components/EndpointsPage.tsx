import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath, isAbortError } from '../api';
import { localTime } from '../format';
import { useDocumentTitle } from '../hooks';
import type { Endpoint } from '../types';
import { Alert } from './Alert';
import { ConfirmDialog } from './ConfirmDialog';
import { EndpointRow } from './EndpointRow';

/** The user's endpoints: create, rename, (de)activate, delete, copy a capture URL. */
export function EndpointsPage() {
  useDocumentTitle('Endpoints');
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');
  const [toDelete, setToDelete] = useState<Endpoint | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [deleteError, setDeleteError] = useState<unknown>(null);
  const nameInput = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    api<{ endpoints: Endpoint[] }>('/api/endpoints', { signal: controller.signal })
      .then((data) => setEndpoints(data.endpoints))
      .catch((error) => {
        if (!isAbortError(error)) setLoadError(error);
      });
    return () => controller.abort();
  }, []);

  // create and confirmDelete never reject (failures are shown in the page): handlers fire and forget them.
  const create = async (event: Event) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setCreateError('Give the endpoint a name, for example “Stripe production”.');
      nameInput.current?.focus();
      return;
    }
    setCreating(true);
    setCreateError(null);
    try {
      const { endpoint } = await api<{ endpoint: Endpoint }>('/api/endpoints', {
        method: 'POST',
        body: { name: trimmed },
      });
      setEndpoints((list) => [endpoint, ...(list ?? []).filter((e) => e.id !== endpoint.id)]);
      setName('');
      setAnnouncement(`Endpoint “${endpoint.name}” created.`);
    } catch (error) {
      setCreateError(error);
    } finally {
      setCreating(false);
    }
  };

  const replace = useCallback((updated: Endpoint) => {
    setEndpoints((list) => list?.map((e) => (e.id === updated.id ? { ...e, ...updated } : e)) ?? null);
  }, []);

  const cancelDelete = useCallback(() => {
    if (!deleting) {
      setToDelete(null);
      setDeleteError(null);
    }
  }, [deleting]);

  const confirmDelete = async () => {
    if (!toDelete) return;
    setDeleting(true);
    setDeleteError(null);
    try {
      await api<{ ok: boolean }>(endpointPath(toDelete.id), { method: 'DELETE' });
      setEndpoints((list) => list?.filter((e) => e.id !== toDelete.id) ?? null);
      setAnnouncement(`Endpoint “${toDelete.name}” deleted.`);
      setToDelete(null);
      nameInput.current?.focus();
    } catch (error) {
      setDeleteError(error);
    } finally {
      setDeleting(false);
    }
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1} data-autofocus>
          Endpoints
        </h1>
        <p class="muted">
          Each endpoint has a permanent capture URL. Point a webhook provider at it; every request is stored,
          then forwarded to the endpoint’s destinations.
        </p>
      </div>

      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">New endpoint</h2>
        <form class="inline-form" onSubmit={(event) => void create(event)}>
          <div class="field grow">
            <label for="new-endpoint-name">Name</label>
            <input
              id="new-endpoint-name"
              ref={nameInput}
              data-testid="new-endpoint-name"
              type="text"
              maxLength={200}
              placeholder="e.g. Stripe production"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </div>
          <button type="submit" class="btn btn-primary" data-testid="create-endpoint" disabled={creating}>
            {creating ? 'Creating…' : 'Create endpoint'}
          </button>
        </form>
        <Alert error={createError} />
      </section>

      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>

      <section aria-labelledby="list-heading">
        <h2 id="list-heading" class="section-title">
          Your endpoints{endpoints ? ` (${endpoints.length})` : ''}
        </h2>
        <Alert error={loadError} />
        {!endpoints && !loadError && (
          <p class="muted" aria-busy="true">
            Loading endpoints…
          </p>
        )}
        {endpoints && endpoints.length === 0 && (
          <div class="empty" data-testid="endpoints-empty">
            <p>
              <strong>No endpoints yet.</strong> Create one above to get a capture URL.
            </p>
          </div>
        )}
        {endpoints && endpoints.length > 0 && (
          <ul class="endpoint-list" data-testid="endpoints-list">
            {endpoints.map((endpoint) => (
              <EndpointRow key={endpoint.id} endpoint={endpoint} onChange={replace} onDelete={setToDelete} />
            ))}
          </ul>
        )}
      </section>

      <ConfirmDialog
        open={toDelete !== null}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        confirmTestId="confirm-delete"
        busy={deleting}
        onConfirm={() => void confirmDelete()}
        onCancel={cancelDelete}
      >
        <p>
          <strong>{toDelete?.name}</strong> (created {localTime(toDelete?.created_at)}) will be deleted with
          all its events and destinations. Its capture URL will stop working. This cannot be undone.
        </p>
        <Alert error={deleteError} />
      </ConfirmDialog>
    </div>
  );
}
