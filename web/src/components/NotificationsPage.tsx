import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { isAbortError } from '../api/errors';
import { createChannel, deleteChannel, listChannels, testChannel } from '../api/notification-channels';
import { channelHealthText, CHANNEL_TYPE_TEXT, EVENT_TEXT } from '../notification-channels';
import { useBusyAction, useDocumentTitle } from '../hooks';
import {
  CHANNEL_TYPES,
  type ChannelTestResult,
  type CreatedNotificationChannel,
  NOTIFICATION_EVENTS,
  type NotificationChannel,
} from '../types';
import { Alert } from './Alert';
import { ConfirmActionDialog } from './ConfirmActionDialog';
import { CopyButton } from './CopyButton';
import { InputField, SelectField } from './Field';

type ChannelType = NotificationChannel['type'];
type EventType = NotificationChannel['events'][number];

const TYPE_OPTIONS = CHANNEL_TYPES.map((type) => [type, CHANNEL_TYPE_TEXT[type].label] as const);

/** Where Hooktrail tells you about dead letters, issues and paused destinations. */
export function NotificationsPage() {
  useDocumentTitle('Notifications');
  const [channels, setChannels] = useState<NotificationChannel[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedNotificationChannel | null>(null);
  const [toDelete, setToDelete] = useState<NotificationChannel | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    listChannels(controller.signal).then(setChannels, (error) => {
      if (!isAbortError(error)) setLoadError(error);
    });
    return () => controller.abort();
  }, []);

  const onCreated = (answer: CreatedNotificationChannel) => {
    setCreated(answer.channel.secret ? answer : null);
    setChannels((list) => [...(list ?? []), answer.channel]);
    setAnnouncement(`${CHANNEL_TYPE_TEXT[answer.channel.type].label} channel added.`);
  };
  const replace = (updated: NotificationChannel) =>
    setChannels((list) => list?.map((channel) => (channel.id === updated.id ? updated : channel)) ?? null);
  const onDeleted = (deleted: NotificationChannel) => {
    setChannels((list) => list?.filter((channel) => channel.id !== deleted.id) ?? null);
    setCreated((shown) => (shown?.channel.id === deleted.id ? null : shown));
    setAnnouncement(`Channel ${deleted.target} deleted.`);
    setToDelete(null);
  };
  const closeDelete = useCallback(() => setToDelete(null), []);
  const dismissSecret = () => {
    setCreated(null);
    heading.current?.focus();
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1 ref={heading} tabIndex={-1} data-autofocus>
          Notifications
        </h1>
        <p class="muted">
          Channels that hear about dead letters, issues and paused destinations of your endpoints and of the
          teams you own. The first of each kind goes at once; what follows within the window is gathered into
          one digest, so a flood of failures sends a few messages, not thousands. Webhook channels get each
          notification at once, signed. The dead-letter email to your address always goes.
        </p>
      </div>
      <ChannelForm onCreated={onCreated} />
      {created && <NewSecretNotice created={created} onDone={dismissSecret} />}
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      <section aria-labelledby="channels-heading">
        <h2 id="channels-heading" class="section-title">
          Your channels{channels ? ` (${channels.length})` : ''}
        </h2>
        <Alert error={loadError} />
        {!channels && !loadError && (
          <p class="muted" aria-busy="true">
            Loading channels…
          </p>
        )}
        {channels?.length === 0 && (
          <div class="empty" data-testid="channels-empty">
            <p>
              <strong>No channels yet.</strong> Add one above: an email address, Slack, Discord or a webhook
              of your own.
            </p>
          </div>
        )}
        {channels && channels.length > 0 && (
          <ul class="channel-list" data-testid="channels-list">
            {channels.map((channel) => (
              <ChannelRow key={channel.id} channel={channel} onChange={replace} onDelete={setToDelete} />
            ))}
          </ul>
        )}
      </section>
      <DeleteDialog channel={toDelete} onDeleted={onDeleted} onCancel={closeDelete} />
    </div>
  );
}

function ChannelForm({ onCreated }: { onCreated: (created: CreatedNotificationChannel) => void }) {
  const [type, setType] = useState<ChannelType>('email');
  const [target, setTarget] = useState('');
  const [events, setEvents] = useState<EventType[]>(['dead_letter', 'issue.opened']);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const text = CHANNEL_TYPE_TEXT[type];

  const toggle = (event: EventType) =>
    setEvents((chosen) =>
      chosen.includes(event)
        ? chosen.filter((e) => e !== event)
        : NOTIFICATION_EVENTS.filter((e) => e === event || chosen.includes(e)),
    );

  // Never rejects (failures are shown through setError), so the form fires and forgets it.
  const create = async (submit: Event) => {
    submit.preventDefault();
    setCreating(true);
    setError(null);
    try {
      onCreated(await createChannel({ type, target: target.trim(), events }));
      setTarget('');
    } catch (err) {
      setError(err);
    } finally {
      setCreating(false);
    }
  };

  return (
    <section class="card" aria-labelledby="new-channel-heading">
      <h2 id="new-channel-heading">New channel</h2>
      <form class="channel-form" onSubmit={(submit) => void create(submit)}>
        <div class="channel-form-row">
          <SelectField
            id="channel-type"
            label="Type"
            value={type}
            options={TYPE_OPTIONS}
            onChange={setType}
          />
          <InputField
            id="channel-target"
            label={text.target}
            placeholder={text.placeholder}
            hint={text.hint}
            grow
            required
            value={target}
            onInput={setTarget}
          />
        </div>
        <fieldset class="choice-group event-choices">
          <legend>Tell it about</legend>
          {NOTIFICATION_EVENTS.map((event) => {
            const id = `channel-event-${event.replace('.', '-')}`;
            return (
              <div key={event} class="choice">
                <input
                  id={id}
                  type="checkbox"
                  value={event}
                  aria-describedby={`${id}-hint`}
                  checked={events.includes(event)}
                  onChange={() => toggle(event)}
                />
                <div>
                  <label for={id}>{EVENT_TEXT[event].label}</label>
                  <p id={`${id}-hint`} class="hint">
                    {EVENT_TEXT[event].explanation}
                  </p>
                </div>
              </div>
            );
          })}
        </fieldset>
        <button type="submit" class="btn btn-primary" data-testid="create-channel" disabled={creating}>
          {creating ? 'Adding…' : 'Add channel'}
        </button>
      </form>
      <Alert error={error} testId="channel-error" />
    </section>
  );
}

/** A webhook channel's signing secret, this once, with a copy button. */
function NewSecretNotice({ created, onDone }: { created: CreatedNotificationChannel; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [created]);
  const secret = created.channel.secret ?? '';
  return (
    <section class="card new-key" aria-labelledby="channel-secret-heading" data-testid="channel-secret">
      <h2 id="channel-secret-heading" ref={heading} tabIndex={-1}>
        The signing secret of {created.channel.target}
      </h2>
      <p class="alert alert-warning">
        Copy it now: it will not be shown again. Check the hooktrail-signature header of each message with it
        (Standard Webhooks), as for forwarded events.
      </p>
      <div class="code-block">
        <pre data-testid="channel-secret-value">{secret}</pre>
        <CopyButton text={secret} testId="copy-channel-secret" ariaLabel="Copy the signing secret" />
      </div>
      <button type="button" class="btn" data-testid="dismiss-channel-secret" onClick={onDone}>
        Done, I have copied it
      </button>
    </section>
  );
}

interface RowProps {
  channel: NotificationChannel;
  onChange: (channel: NotificationChannel) => void;
  onDelete: (channel: NotificationChannel) => void;
}

function ChannelRow({ channel, onChange, onDelete }: RowProps) {
  const { busy: testing, error, run } = useBusyAction();
  const [outcome, setOutcome] = useState<ChannelTestResult | null>(null);
  const label = CHANNEL_TYPE_TEXT[channel.type].label;

  const test = () => {
    setOutcome(null);
    return run(async () => {
      setOutcome(await testChannel(channel.id));
      // A test that went through makes a failing channel healthy again: show its health as it is now.
      const fresh = await listChannels().then(
        (list) => list.find((candidate) => candidate.id === channel.id),
        () => undefined, // the outcome is shown; the health line catches up on the next visit
      );
      if (fresh) onChange(fresh);
    });
  };

  return (
    <li
      class="channel-row"
      data-testid="channel-row"
      data-channel-id={channel.id}
      data-type={channel.type}
      data-health={channel.status}
    >
      <div class="channel-title">
        <span class="badge badge-scope" data-testid="channel-type">
          {label}
        </span>
        <code class="url" data-testid="channel-target">
          {channel.target}
        </code>
      </div>
      <p class="small channel-events" data-testid="channel-events">
        <span class="muted">Tells about:</span>{' '}
        {channel.events.map((event) => EVENT_TEXT[event].label).join(', ')}
      </p>
      <p class={`small channel-health channel-${channel.status}`} data-testid="channel-health">
        <span
          class="health-dot"
          data-level={channel.status === 'ok' ? 'healthy' : 'failing'}
          aria-hidden="true"
        />
        {channelHealthText(channel)}
      </p>
      <div class="channel-actions">
        <button
          type="button"
          class="btn btn-small"
          data-testid="test-channel"
          aria-label={`Send a test to ${channel.target}`}
          onClick={() => void test()}
          disabled={testing}
        >
          {testing ? 'Sending…' : 'Send a test'}
        </button>
        <button
          type="button"
          class="btn btn-small btn-danger-outline"
          data-testid="delete-channel"
          aria-label={`Delete the ${label} channel ${channel.target}`}
          onClick={() => onDelete(channel)}
        >
          Delete
        </button>
      </div>
      {outcome && (
        <p
          class={`alert ${outcome.ok ? 'alert-success' : 'alert-error'} channel-outcome`}
          role="status"
          data-testid="channel-test-result"
          data-ok={outcome.ok}
        >
          {outcome.ok
            ? 'Test sent: check that it arrived.'
            : `The test failed: ${outcome.error ?? 'no answer'}`}
        </p>
      )}
      {error !== null && (
        <div class="row-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}

interface DeleteProps {
  channel: NotificationChannel | null;
  onDeleted: (channel: NotificationChannel) => void;
  onCancel: () => void;
}

function DeleteDialog({ channel, onDeleted, onCancel }: DeleteProps) {
  return (
    <ConfirmActionDialog
      target={channel}
      title="Delete this channel?"
      confirmLabel="Delete channel"
      confirmTestId="confirm-delete-channel"
      action={(target) => deleteChannel(target.id)}
      onDone={onDeleted}
      onCancel={onCancel}
    >
      <p>
        <strong>{channel?.target}</strong> stops getting notifications at once. Messages already gathered for
        it are not sent.
      </p>
    </ConfirmActionDialog>
  );
}
