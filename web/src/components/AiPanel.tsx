import { useState } from 'preact/hooks';
import { api } from '../api/client';
import { ApiError, errorMessages } from '../api/errors';
import { CopyButton } from './CopyButton';

const FRAMEWORKS: Record<string, string[]> = {
  typescript: ['express', 'fastify', 'nextjs'],
  javascript: ['express', 'fastify', 'nextjs'],
  python: ['fastapi'],
  go: ['gin'],
};
const LANGUAGE_LABELS: Record<string, string> = {
  typescript: 'TypeScript',
  javascript: 'JavaScript',
  python: 'Python',
  go: 'Go',
};
const FRAMEWORK_LABELS: Record<string, string> = {
  express: 'Express',
  fastify: 'Fastify',
  nextjs: 'Next.js',
  fastapi: 'FastAPI',
  gin: 'Gin',
};

type Kind = 'explain' | 'schema' | 'handler' | 'diagnose';
const TITLES: Record<Kind, string> = {
  explain: 'Explanation',
  schema: 'TypeScript interface',
  handler: 'Handler code',
  diagnose: 'Failure diagnosis',
};

interface Result {
  kind: Kind;
  text: string;
  provider?: string;
  label: string;
}

/** AI analysis of the event (Starter plan and above). */
export function AiPanel({ eventPath, eventStatus }: { eventPath: string; eventStatus: string }) {
  const [language, setLanguage] = useState('typescript');
  const [framework, setFramework] = useState('express');
  const [busy, setBusy] = useState<Kind | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<{ upgrade: boolean; messages: string[] } | null>(null);

  const chooseLanguage = (value: string) => {
    setLanguage(value);
    if (!FRAMEWORKS[value]?.includes(framework)) setFramework(FRAMEWORKS[value]?.[0] ?? 'express');
  };

  // Never rejects (failures are shown through setError), so the buttons fire and forget it.
  const run = async (kind: Kind) => {
    setBusy(kind);
    setError(null);
    try {
      const base = `${eventPath}/ai/${kind}`;
      let text = '';
      let provider: string | undefined;
      let label = TITLES[kind];
      if (kind === 'handler') {
        const res = await api<{ handler: string; provider?: string }>(base, {
          method: 'POST',
          body: { language, framework },
        });
        text = res.handler;
        provider = res.provider;
        label = `${TITLES.handler}: ${LANGUAGE_LABELS[language]} with ${FRAMEWORK_LABELS[framework]}`;
      } else {
        const res = await api<Record<string, unknown>>(base);
        const field = kind === 'explain' ? 'explanation' : kind === 'schema' ? 'schema' : 'diagnosis';
        text = typeof res[field] === 'string' ? res[field] : JSON.stringify(res[field], null, 2);
        provider = typeof res.provider === 'string' ? res.provider : undefined;
      }
      setResult({ kind, text, provider, label });
    } catch (err) {
      setError({
        upgrade: err instanceof ApiError && (err.upgradeRequired || err.status === 403),
        messages: errorMessages(err),
      });
    } finally {
      setBusy(null);
    }
  };

  const failed = eventStatus === 'failed' || eventStatus === 'dead_letter';
  return (
    <section class="card ai" aria-labelledby="ai-heading" aria-busy={busy !== null}>
      <div class="card-head">
        <h2 id="ai-heading">AI analysis</h2>
        <span class="muted small">Starter plan and above</span>
      </div>
      <div class="ai-actions">
        <button
          type="button"
          class="btn"
          data-testid="ai-explain"
          onClick={() => void run('explain')}
          disabled={busy !== null}
        >
          {busy === 'explain' ? 'Explaining…' : 'Explain'}
        </button>
        <button
          type="button"
          class="btn"
          data-testid="ai-schema"
          onClick={() => void run('schema')}
          disabled={busy !== null}
        >
          {busy === 'schema' ? 'Writing…' : 'Schema'}
        </button>
        <button
          type="button"
          class="btn"
          data-testid="ai-diagnose"
          onClick={() => void run('diagnose')}
          disabled={busy !== null}
          aria-describedby={failed ? undefined : 'diagnose-hint'}
        >
          {busy === 'diagnose' ? 'Diagnosing…' : 'Diagnose'}
        </button>
      </div>
      {!failed && (
        <p id="diagnose-hint" class="hint">
          Diagnose is most useful for failed or dead-letter events.
        </p>
      )}
      <fieldset class="ai-handler">
        <legend>Handler code</legend>
        <div class="field">
          <label for="ai-language">Language</label>
          <select
            id="ai-language"
            data-testid="ai-language"
            value={language}
            onChange={(e) => chooseLanguage(e.currentTarget.value)}
          >
            {Object.keys(FRAMEWORKS).map((l) => (
              <option key={l} value={l}>
                {LANGUAGE_LABELS[l]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="ai-framework">Framework</label>
          <select
            id="ai-framework"
            data-testid="ai-framework"
            value={framework}
            onChange={(e) => setFramework(e.currentTarget.value)}
          >
            {(FRAMEWORKS[language] ?? []).map((f) => (
              <option key={f} value={f}>
                {FRAMEWORK_LABELS[f]}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          class="btn"
          data-testid="ai-handler"
          onClick={() => void run('handler')}
          disabled={busy !== null}
        >
          {busy === 'handler' ? 'Generating…' : 'Generate handler'}
        </button>
      </fieldset>

      <p class="sr-only" role="status">
        {busy ? 'Asking the AI…' : ''}
      </p>
      {error?.upgrade && (
        <div class="alert alert-upgrade" role="alert" data-testid="ai-upgrade">
          <p>
            <strong>AI analysis is on the Starter plan and above.</strong> Upgrade your plan to explain
            events, generate schemas and handlers, and diagnose failed deliveries.
          </p>
          {error.messages.length > 0 && <p class="small">{error.messages.join(' ')}</p>}
        </div>
      )}
      {error && !error.upgrade && (
        <div class="alert alert-error" role="alert" data-testid="ai-error">
          {error.messages.join(' ')}
        </div>
      )}
      {result && (
        <div class="ai-result">
          <div class="subsection-head">
            <h3>{result.label}</h3>
            <CopyButton text={result.text} testId="copy-ai-output" ariaLabel={`Copy ${result.label}`} />
          </div>
          <pre
            class={`code${result.kind === 'explain' || result.kind === 'diagnose' ? ' prose' : ''}`}
            data-testid="ai-output"
            data-kind={result.kind}
            tabIndex={0}
          >
            {result.text}
          </pre>
          {result.provider && (
            <p class="hint">Generated by {result.provider}. Check AI output before relying on it.</p>
          )}
        </div>
      )}
    </section>
  );
}
