//go:build linux

package native_test

import "github.com/paddockhq/paddock/client"

func execReq(user string, argv ...string) client.ExecRequest {
	return client.ExecRequest{Cmd: argv, User: user}
}
