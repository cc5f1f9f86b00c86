import { useEffect, useRef, useState } from 'preact/hooks';
import { login, register } from '../api/auth';
import { useDocumentTitle } from '../hooks';
import { Alert } from './Alert';

type Mode = 'login' | 'signup';

/** Log in or sign up: one form, with a toggle between the two. */
export function AuthScreen({ initialMode, notice }: { initialMode: Mode; notice?: string | null }) {
  const [mode, setMode] = useState<Mode>(initialMode);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const signup = mode === 'signup';
  useDocumentTitle(signup ? 'Sign up' : 'Log in');

  useEffect(() => setMode(initialMode), [initialMode]);

  const toggle = () => {
    setMode(signup ? 'login' : 'signup');
    setError(null);
    heading.current?.focus();
  };

  // Never rejects (failures are shown through setError), so the form fires and forgets it.
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (signup) await register(email.trim(), name.trim(), password);
      else await login(email.trim(), password);
      if (/^#\/(login|signup)$/.test(window.location.hash)) window.location.hash = '/';
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth">
      <div class="auth-card">
        <p class="brand brand-large" aria-hidden="true">
          <span class="brand-mark">⤷</span> Hooktrail
        </p>
        <h1 ref={heading} tabIndex={-1}>
          {signup ? 'Create your account' : 'Log in'}
        </h1>
        <p class="muted">
          {signup ? 'Capture, forward, replay and explain your webhooks.' : 'Welcome back to Hooktrail.'}
        </p>
        {notice && (
          <p class="alert alert-info" role="status">
            {notice}
          </p>
        )}
        <form onSubmit={(event) => void submit(event)} class="stack">
          <div class="field">
            <label for="auth-email">Email</label>
            <input
              id="auth-email"
              data-testid="email"
              type="email"
              autoComplete="email"
              required
              maxLength={254}
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </div>
          {signup && (
            <div class="field">
              <label for="auth-name">Name</label>
              <input
                id="auth-name"
                data-testid="name"
                type="text"
                autoComplete="name"
                required
                maxLength={100}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
              />
            </div>
          )}
          <div class="field">
            <label for="auth-password">Password</label>
            <input
              id="auth-password"
              data-testid="password"
              type="password"
              autoComplete={signup ? 'new-password' : 'current-password'}
              required
              minLength={signup ? 8 : undefined}
              maxLength={128}
              aria-describedby={signup ? 'auth-password-hint' : undefined}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            {signup && (
              <p id="auth-password-hint" class="hint">
                8 to 128 characters.
              </p>
            )}
          </div>
          <Alert error={error} testId="auth-error" />
          <button type="submit" class="btn btn-primary btn-block" data-testid="submit-auth" disabled={busy}>
            {busy ? (signup ? 'Creating account…' : 'Logging in…') : signup ? 'Sign up' : 'Log in'}
          </button>
        </form>
        <p class="auth-switch">
          {signup ? 'Already have an account?' : 'New to Hooktrail?'}{' '}
          <button type="button" class="link-button" data-testid="toggle-auth-mode" onClick={toggle}>
            {signup ? 'Log in' : 'Create an account'}
          </button>
        </p>
      </div>
    </main>
  );
}
