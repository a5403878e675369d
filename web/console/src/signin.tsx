import { useState } from 'preact/hooks';
import { Session, signIn } from './api';
import { ErrorBox } from './ui';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice: string }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('key') as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      const s = await signIn(input.value);
      // The key leaves the page here: the field is cleared, and nothing
      // else ever held it.
      input.value = '';
      onSignedIn(s);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title" autocomplete="off">
        <h1 id="signin-title">Paddock console</h1>
        <p>Sign in with an API key. The key is exchanged for a session; the page does not keep it.</p>
        {notice ? (
          <p class="notice" role="status">
            {notice}
          </p>
        ) : null}
        <label class="field">
          <span class="label">API key</span>
          <input name="key" type="password" required autocomplete="off" spellcheck={false} placeholder="pdk_…" />
        </label>
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
