package process

import "testing"

func TestPasswdShell(t *testing.T) {
	passwd := []byte("root:x:0:0:root:/root:/bin/bash\n" +
		"broken line\n" +
		"user:x:1000:1000::/home/user:/bin/sh\r\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin")
	for name, want := range map[string]string{"root": "/bin/bash", "user": "/bin/sh", "nobody": "/usr/sbin/nologin", "missing": "", "": ""} {
		if got := passwdShell(passwd, name); got != want {
			t.Errorf("passwdShell(%q) = %q, want %q", name, got, want)
		}
	}
	if got := passwdShell([]byte("root:x:0:0::/root:/bin/\x00sh\n"), "root"); got != "" {
		t.Errorf("NUL in shell accepted: %q", got)
	}
}

func FuzzPasswdShell(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/bash\n"), "root")
	f.Add([]byte(":::::::\n::::::\n"), "")
	f.Add([]byte("user:x:1000:1000::/home/user:/bin/sh"), "user")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		sh := passwdShell(b, name)
		for i := 0; i < len(sh); i++ {
			if sh[i] == '\n' || sh[i] == 0 {
				t.Fatalf("shell %q holds a newline or NUL", sh)
			}
		}
		if sh != "" && name == "" {
			t.Fatal("a shell for the empty name")
		}
	})
}
