import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { fetchMe } from './api/auth';
import { currentUser, onSessionChange, startSession } from './api/session';
import { ApiKeysPage } from './components/ApiKeysPage';
import { AuditLogPage } from './components/AuditLogPage';
import { AuthScreen } from './components/AuthScreen';
import { EndpointPage } from './components/EndpointPage';
import { EndpointsPage } from './components/EndpointsPage';
import { EventDetail } from './components/EventDetail';
import { Header } from './components/Header';
import { InvitationPage } from './components/InvitationPage';
import { IssuesPage } from './components/IssuesPage';
import { NotificationsPage } from './components/NotificationsPage';
import { TeamPage } from './components/TeamPage';
import { TeamsPage } from './components/TeamsPage';
import { useDocumentTitle } from './hooks';
import { href, type Route, useRoute } from './router';
import './styles.css';

function App() {
  const [user, setUser] = useState(currentUser);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  useEffect(
    () =>
      onSessionChange((next, reason) => {
        setUser(next);
        if (next) setNotice(null);
        else if (reason === 'expired') setNotice('Your session has expired. Please log in again.');
        else if (reason === 'logout') setNotice('You are logged out.');
      }),
    [],
  );

  // The stored user may be stale (plan changes): reload it once per session.
  const userId = user?.id;
  useEffect(() => {
    if (userId) fetchMe().catch(() => undefined);
  }, [userId]);

  // Move focus to the new page's heading on navigation, for keyboard and screen-reader users.
  const routeKey = routeKeyOf(route);
  const firstRoute = useRef(true);
  useEffect(() => {
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    window.scrollTo(0, 0);
    const timer = setTimeout(() => {
      if (document.activeElement !== document.body && document.activeElement !== null) return;
      const target =
        document.querySelector<HTMLElement>('main [data-autofocus]') ?? document.getElementById('main');
      target?.focus({ preventScroll: true });
    }, 0);
    return () => clearTimeout(timer);
  }, [routeKey]);

  // Logged in on #/login or #/signup: go to the dashboard.
  useEffect(() => {
    if (user && (route.name === 'login' || route.name === 'signup')) window.location.hash = '/';
  }, [user, route.name]);

  if (!user) {
    return (
      <>
        <a class="skip-link" href="#main" onClick={skipToMain}>
          Skip to content
        </a>
        <AuthScreen
          initialMode={route.name === 'signup' ? 'signup' : 'login'}
          notice={notice ?? (route.name === 'invitation' ? INVITATION_NOTICE : null)}
        />
      </>
    );
  }

  return (
    <>
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <Header user={user} route={route} />
      <main id="main" tabIndex={-1}>
        <Screen route={route} />
      </main>
    </>
  );
}

/** Logged out on an invitation's link: the auth screen stays on it, so the invitee comes back to accept. */
const INVITATION_NOTICE =
  'You were invited to a team. Log in, or create an account, with the address the invitation was sent to: you come back here to accept it.';

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'endpoint':
      return <EndpointPage key={route.id} id={route.id} params={route.params} />;
    case 'event':
      return (
        <EventDetail key={`${route.id}/${route.eventId}`} endpointId={route.id} eventId={route.eventId} />
      );
    case 'api-keys':
      return <ApiKeysPage />;
    case 'issues':
      return <IssuesPage params={route.params} />;
    case 'notifications':
      return <NotificationsPage />;
    case 'teams':
      return <TeamsPage />;
    case 'team':
      return <TeamPage key={route.id} id={route.id} />;
    case 'invitation':
      return <InvitationPage key={route.token} token={route.token} />;
    case 'audit-log':
      return <AuditLogPage params={route.params} />;
    case 'not-found':
      return <NotFound />;
    default:
      return <EndpointsPage />;
  }
}

function NotFound() {
  useDocumentTitle('Not found');
  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Page not found
      </h1>
      <p>
        <a href={href.endpoints()}>Go to your endpoints</a>
      </p>
    </div>
  );
}

function routeKeyOf(route: Route): string {
  if (route.name === 'endpoint') return `endpoint/${route.id}`;
  if (route.name === 'event') return `event/${route.id}/${route.eventId}`;
  if (route.name === 'team') return `team/${route.id}`;
  return route.name;
}

/** The skip link must not change the hash (that is the router). */
function skipToMain(event: MouseEvent) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

startSession();
const root = document.getElementById('app');
if (root) render(<App />, root);
