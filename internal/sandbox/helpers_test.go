package sandbox_test

import "errors"

func errsIs(err, target error) bool { return errors.Is(err, target) }
