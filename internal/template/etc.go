package template

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Identities every template provides. The guest agent runs commands as
// UserUID unless a caller asks for root.
const (
	UserName = "user"
	UserUID  = 1000
	UserGID  = 1000
	UserHome = "/home/user"
)

// Synthesized /etc files shared by the host skeleton and built templates.
// The guest rewrites hosts, hostname and resolv.conf at start; these are
// the defaults a template is inspected or chrooted with.
const (
	etcHosts = "127.0.0.1\tlocalhost\n" +
		"127.0.1.1\tsandbox\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"ff02::1\tip6-allnodes\n" +
		"ff02::2\tip6-allrouters\n"
	etcHostname   = "sandbox\n"
	etcResolvConf = "# written by the sandbox at start\n"
	etcNsswitch   = "passwd:    files\n" +
		"group:     files\n" +
		"shadow:    files\n" +
		"hosts:     files dns\n" +
		"networks:  files\n" +
		"protocols: files\n" +
		"services:  files\n" +
		"ethers:    files\n" +
		"rpc:       files\n"
)

// hostPasswd is the whole user database of the host skeleton: never the
// host's own accounts (their names, uids and home paths are host detail).
func hostPasswd(shell, nologin string) string {
	return "root:x:0:0:root:/root:" + shell + "\n" +
		UserName + ":x:" + strconv.Itoa(UserUID) + ":" + strconv.Itoa(UserGID) + "::" + UserHome + ":" + shell + "\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:" + nologin + "\n"
}

func hostGroup() string {
	return "root:x:0:\n" +
		"tty:x:5:\n" +
		"users:x:100:\n" +
		UserName + ":x:" + strconv.Itoa(UserGID) + ":\n" +
		"nogroup:x:65534:\n"
}

// maxAccountDB bounds the passwd/group/shadow files addSandboxUser edits.
const maxAccountDB = 1 << 20

// accountFiles are the contents of a built rootfs's account databases.
// A nil shadow or gshadow means the file does not exist and is left alone.
type accountFiles struct {
	passwd, group, shadow, gshadow []byte
}

// addSandboxUser adds user (UserUID/UserGID, home UserHome) to the account
// databases of a built root filesystem. An existing identical account is
// kept; a different account holding the name or the id is an error (the
// sandbox must know exactly who uid 1000 is).
func addSandboxUser(in accountFiles, shell string) (accountFiles, error) {
	out := in
	for _, f := range [][]byte{in.passwd, in.group, in.shadow, in.gshadow} {
		if len(f) > maxAccountDB {
			return out, fmt.Errorf("account database over %d bytes", maxAccountDB)
		}
	}
	hasRoot := false
	hasUser, err := hasAccount(in.passwd, 7, "passwd", "uid", UserUID, func(f []string) {
		if f[0] == "root" && f[2] == "0" {
			hasRoot = true
		}
	})
	if err != nil {
		return out, err
	}
	if !hasRoot {
		return out, fmt.Errorf("passwd has no root account")
	}
	if !hasUser {
		out.passwd = appendLine(in.passwd, UserName+":x:"+strconv.Itoa(UserUID)+":"+strconv.Itoa(UserGID)+"::"+UserHome+":"+shell)
	}

	hasGroup, err := hasAccount(in.group, 4, "group", "gid", UserGID, nil)
	if err != nil {
		return out, err
	}
	if !hasGroup {
		out.group = appendLine(in.group, UserName+":x:"+strconv.Itoa(UserGID)+":")
	}

	// Locked password ("!") with an empty last-change field: no password
	// login, and no forced password change (which a 0 would mean).
	if in.shadow != nil && !hasEntry(in.shadow, UserName) {
		out.shadow = appendLine(in.shadow, UserName+":!::0:99999:7:::")
	}
	if in.gshadow != nil && !hasEntry(in.gshadow, UserName) {
		out.gshadow = appendLine(in.gshadow, UserName+":!::")
	}
	return out, nil
}

// hasAccount reports whether db (passwd or group: entries of n fields,
// the name first and the id third) holds UserName with id; the name or the
// id held by another entry is an error. each, if set, sees every entry.
func hasAccount(db []byte, n int, file, idName string, id int, each func(f []string)) (bool, error) {
	found := false
	for _, line := range lines(db) {
		f := strings.Split(line, ":")
		if len(f) != n {
			continue
		}
		if each != nil {
			each(f)
		}
		nameMatch, idMatch := f[0] == UserName, f[2] == strconv.Itoa(id)
		switch {
		case nameMatch && idMatch:
			found = true
		case nameMatch:
			return false, fmt.Errorf("%s: %s already exists with %s %q", file, UserName, idName, f[2])
		case idMatch:
			return false, fmt.Errorf("%s: %s %d already belongs to %q", file, idName, id, f[0])
		}
	}
	return found, nil
}

func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func hasEntry(db []byte, name string) bool {
	for _, l := range lines(db) {
		if n, _, ok := strings.Cut(l, ":"); ok && n == name {
			return true
		}
	}
	return false
}

func appendLine(b []byte, line string) []byte {
	out := bytes.Clone(b)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(append(out, line...), '\n')
}
