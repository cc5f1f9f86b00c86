import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { createEndpoint, listEndpoints } from '../api/endpoints';
import { isAbortError } from '../api/errors';
import { localTime } from '../format';
import { useDocumentTitle, useScope } from '../hooks';
import { canWrite } from '../roles';
import { inScope } from '../team-scope';
import type { Endpoint } from '../types';
import { Alert } from './Alert';
import { ConfirmDialog } from './ConfirmDialog';
import { EndpointRow } from './EndpointRow';

/**
 * The endpoints of the scope chosen in the header (personal, or a team): create, rename, (de)activate,
 * delete, copy a capture URL. A team's viewers see its endpoints without the buttons that change them.
 */
export function EndpointsPage() {
  useDocumentTitle('Endpoints');
  const { scope, team, teams } = useScope();
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
    listEndpoints(controller.signal)
      .then(setEndpoints)
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
      const endpoint = await createEndpoint(trimmed, scope);
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

  // While the teams load, a team's role is unknown: its buttons wait for it.
  const mayCreate = scope === null || canWrite(team?.role);
  const shown = endpoints?.filter((endpoint) => inScope(endpoint, scope)) ?? null;
  const teamName = (endpoint: Endpoint) => teams?.find((t) => t.id === endpoint.team_id)?.name ?? null;
  const where = team ? ` in ${team.name}` : '';

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

      {mayCreate && (
        <section class="card" aria-labelledby="create-heading">
          <h2 id="create-heading">New endpoint{where}</h2>
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
      )}

      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>

      <section aria-labelledby="list-heading">
        <h2 id="list-heading" class="section-title">
          {team ? `Endpoints of ${team.name}` : 'Your endpoints'}
          {shown ? ` (${shown.length})` : ''}
        </h2>
        <Alert error={loadError} />
        {!shown && !loadError && (
          <p class="muted" aria-busy="true">
            Loading endpoints…
          </p>
        )}
        {shown && shown.length === 0 && (
          <div class="empty" data-testid="endpoints-empty">
            <p>
              <strong>No endpoints{where} yet.</strong>{' '}
              {mayCreate
                ? 'Create one above to get a capture URL.'
                : 'Its members and admins create them; you will see them here.'}
            </p>
          </div>
        )}
        {shown && shown.length > 0 && (
          <ul class="endpoint-list" data-testid="endpoints-list">
            {shown.map((endpoint) => (
              <EndpointRow
                key={endpoint.id}
                endpoint={endpoint}
                teamName={teamName(endpoint)}
                onChange={replace}
                onDelete={setToDelete}
              />
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
