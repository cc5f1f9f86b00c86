import { errorMessages } from '../api/errors';

/** An error (or a list of them, as Nest validation sends), announced to screen readers. */
export function Alert({ error, testId }: { error: unknown; testId?: string }) {
  if (error === null || error === undefined) return null;
  const messages = typeof error === 'string' ? [error] : errorMessages(error);
  return (
    <div class="alert alert-error" role="alert" data-testid={testId}>
      {messages.length === 1 ? (
        <p>{messages[0]}</p>
      ) : (
        <ul>
          {messages.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
