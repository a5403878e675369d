package e2b

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/secret"
)

// E2B's /secrets over Paddock's secret store (internal/secret): per
// tenant, encrypted at rest, never answered. A secret made here is bound
// to no host; a network rule naming it binds it to the rule's domain when
// its caller holds the secrets right (transform.go). The store checks the
// rights again (read to list and get, secrets to set and delete), after
// the gate.
//
// What differs from E2B: a secret has no versions (currentVersion is
// always 1) and no metadata (a create or update with metadata is refused);
// its id is "sec_" and its name.

// secretIDPrefix marks a secret's id (E2B reserves it in names).
const secretIDPrefix = "sec_"

// e2bSecret is E2B's Secret: metadata only, never the value.
type e2bSecret struct {
	SecretID       string            `json:"secretID"`
	Name           string            `json:"name"`
	CurrentVersion int64             `json:"currentVersion"`
	Metadata       map[string]string `json:"metadata"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
}

func secretOf(in secret.Info) e2bSecret {
	return e2bSecret{SecretID: secretIDPrefix + in.Name, Name: in.Name, CurrentVersion: 1, Metadata: map[string]string{},
		CreatedAt: in.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: in.UpdatedAt.UTC().Format(time.RFC3339Nano)}
}

// secretBody is NewSecret and SecretUpdate.
type secretBody struct {
	Name     *string           `json:"name"`
	Value    *string           `json:"value"`
	Metadata map[string]string `json:"metadata"`
}

func (s *Server) secretRoutes(add func(pattern string, need rights.Right, h ctlHandler)) {
	add("GET /secrets", rights.Read, s.listSecrets)
	add("POST /secrets", rights.Secrets, s.createSecret)
	add("GET /secrets/{secretID}", rights.Read, s.getSecret)
	add("POST /secrets/{secretID}", rights.Secrets, s.updateSecret)
	add("DELETE /secrets/{secretID}", rights.Secrets, s.deleteSecret)
}

// secretName is the secret a path names (its id or its name): the name as
// given if the tenant has it, else lower-cased (E2B's create lower-cases
// names; Paddock's own may hold capitals).
func (s *Server) secretName(r *http.Request, sc rights.Scope, id string) string {
	name := strings.TrimPrefix(id, secretIDPrefix)
	if lower := strings.ToLower(name); lower != name {
		if _, err := s.o.Secrets.Info(r.Context(), sc, "", name); errs.CodeOf(err) == errs.CodeNotFound {
			return lower
		}
	}
	return name
}

// newSecretName is a create's name, checked as E2B's SDK and Paddock's
// store both take it.
func newSecretName(n string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(n))
	if strings.HasPrefix(name, secretIDPrefix) {
		return "", errs.Invalid("a secret name cannot start with %s (it marks secret ids)", secretIDPrefix)
	}
	if !secret.ValidName(name) {
		return "", errs.Invalid("secret name %s is invalid here: a letter or '_', then letters, digits, '_', '.', '-'; at most %d",
			quoteText(n), secret.MaxNameLen)
	}
	return name, nil
}

func noMetadata(m map[string]string) error {
	if len(m) > 0 {
		return errs.New(errs.CodeUnsupported, "secret metadata is not supported by Paddock")
	}
	return nil
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b secretBody
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	if b.Name == nil || b.Value == nil {
		writeAPIError(w, errs.Invalid(`the body must be {"name": "...", "value": "..."}`))
		return
	}
	name, err := newSecretName(*b.Name)
	if err == nil {
		err = noMetadata(b.Metadata)
	}
	if err == nil {
		if _, ierr := s.o.Secrets.Info(r.Context(), sc, "", name); ierr == nil {
			err = errs.New(errs.CodeConflict, "secret %s exists (update it with Secret.update)", quoteText(name))
		} else if errs.CodeOf(ierr) != errs.CodeNotFound {
			err = ierr
		}
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	in, _, err := s.o.Secrets.Set(r.Context(), sc, "", name, []byte(*b.Value))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, secretOf(in))
}

func (s *Server) updateSecret(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b secretBody
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	var err error
	switch {
	case b.Value == nil:
		err = errs.Invalid(`the body must be {"value": "..."}`)
	case b.Name != nil:
		err = errs.Invalid("a secret's name cannot be changed")
	default:
		err = noMetadata(b.Metadata)
	}
	name := s.secretName(r, sc, r.PathValue("secretID"))
	if err == nil {
		_, err = s.o.Secrets.Info(r.Context(), sc, "", name) // an update never creates
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	in, _, err := s.o.Secrets.Set(r.Context(), sc, "", name, []byte(*b.Value)) // keeps its hosts
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, secretOf(in))
}

func (s *Server) getSecret(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	in, err := s.o.Secrets.Info(r.Context(), sc, "", s.secretName(r, sc, r.PathValue("secretID")))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, secretOf(in))
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	if err := s.o.Secrets.Delete(r.Context(), sc, "", s.secretName(r, sc, r.PathValue("secretID"))); err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listSecrets pages by name: nextToken is the last name returned.
func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	limit, after := defaultPage, ""
	for k, vs := range r.URL.Query() {
		if len(vs) != 1 {
			writeAPIError(w, errs.Invalid("query parameter %s is given %d times", clipText(k), len(vs)))
			return
		}
		switch v := vs[0]; k {
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxPage {
				writeAPIError(w, errs.Invalid("limit must be between 1 and %d", maxPage))
				return
			}
			limit = n
		case "nextToken":
			if v == "" {
				continue
			}
			raw, err := base64.RawURLEncoding.DecodeString(v)
			if err != nil || len(v) > 256 || !secret.ValidName(string(raw)) {
				writeAPIError(w, errs.Invalid("nextToken is not one this server issued"))
				return
			}
			after = string(raw)
		default:
			writeAPIError(w, errs.Invalid("query parameter %s is not supported", clipText(k)))
			return
		}
	}
	all, err := s.o.Secrets.List(r.Context(), sc, "")
	if err != nil {
		writeAPIError(w, err)
		return
	}
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > after })
	all = all[i:]
	if len(all) > limit {
		all = all[:limit]
		w.Header().Set(hdrNextToken, base64.RawURLEncoding.EncodeToString([]byte(all[len(all)-1].Name)))
	}
	out := make([]e2bSecret, 0, len(all))
	for _, in := range all {
		out = append(out, secretOf(in))
	}
	writeJSON(w, http.StatusOK, out)
}
