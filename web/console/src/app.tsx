import { useEffect, useState } from 'preact/hooks';
import { onSignOut, Session, sessionInfo, setSession, signOutNow } from './api';
import { href, useRoute } from './router';
import { SignIn } from './signin';
import { SandboxList } from './sandboxes';
import { SandboxPage } from './sandbox';
import { AuditPage } from './audit';
import { AdminPage } from './admin';

export function App() {
  const [session, setS] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const route = useRoute();
  useEffect(() => {
    onSignOut((why) => {
      setSession(null);
      setS(null);
      setNotice(why === 'signed out' ? 'You signed out.' : `Signed out: ${why}`);
    });
    sessionInfo().then(
      (s) => {
        setSession(s);
        setS(s);
      },
      () => setS(null),
    );
  }, []);
  if (session === undefined) {
    return (
      <main id="main" class="loading">
        <p>Loading…</p>
      </main>
    );
  }
  if (session === null) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          setSession(s);
          setNotice('');
          setS(s);
        }}
      />
    );
  }
  const admin = session.scopes.includes('admin');
  const page = route[0] || 'sandboxes';
  let body;
  if (page === 'sandboxes' && route[1]) body = <SandboxPage id={route[1]} session={session} />;
  else if (page === 'audit') body = <AuditPage session={session} />;
  else if (page === 'admin') body = <AdminPage session={session} />;
  else body = <SandboxList session={session} />;
  const nav = (name: string, to: string) => (
    <a href={href(to)} class={page === to ? 'active' : ''} aria-current={page === to ? 'page' : undefined}>
      {name}
    </a>
  );
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href={href('sandboxes')}>
          Paddock
        </a>
        <nav aria-label="Main">
          {nav('Sandboxes', 'sandboxes')}
          {nav('Audit', 'audit')}
          {admin ? nav('Admin', 'admin') : null}
        </nav>
        <div class="who">
          <span title="the key this console acts as" data-testid="whoami">
            {session.key_id} · tenant {session.tenant} · {session.scopes.join(', ')}
          </span>
          <button type="button" class="secondary" onClick={() => signOutNow()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">{body}</main>
    </div>
  );
}
