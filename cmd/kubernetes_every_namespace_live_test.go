package cmd

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// `locks ls --dsn k8s://*` lists the Leases of every namespace, each with
// its namespace as the source, in one request; an account that may not
// list across namespaces gets one line naming the ClusterRole to grant
// (exit 1).
func TestKubernetesEveryNamespace(t *testing.T) {
	_, kubeconfig := kubeLive(t)
	prefix := "every-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	holder := "controller-" + prefix
	secs, trans := int32(60), int32(1)
	now := metav1.NewMicroTime(time.Now())
	for _, ns := range []string{"default", "team-a"} {
		leases := kubeLeases(t, kubeconfig, ns)
		name := prefix + "-" + ns
		if _, err := leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now, LeaseTransitions: &trans}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = leases.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	every := "k8s://*?kubeconfig=" + kubeconfig
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", every, "-o", "json", "--name", prefix+"-*")
	if r.err != nil {
		t.Fatalf("locks ls: %v\n%s", r.err, r.stderr)
	}
	var listed []listedLock
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range listed {
		if l.State != "held" || l.Owner != holder {
			t.Errorf("listed %+v, want held by %s", l, holder)
		}
		got = append(got, l.Source+"/"+l.Name)
	}
	if want := "default/" + prefix + "-default team-a/" + prefix + "-team-a"; strings.Join(got, " ") != want {
		t.Errorf("locks ls on every namespace: %s, want %s", strings.Join(got, " "), want)
	}

	r = runCmd(t, false, nil, "locks", "ls", "--dsn", every+"&context=namespaced")
	if ExitCode(r.err) != CodeError || !strings.Contains(errString(r.err), "clusterrole") || strings.Contains(strings.TrimSpace(errString(r.err)), "\n") {
		t.Errorf("locks ls across namespaces without the right: exit %d, %v; want %d and one line naming the ClusterRole", ExitCode(r.err), r.err, CodeError)
	}
	if r := runCmd(t, false, nil, "locks", "ls", "--dsn", "k8s://team-a?kubeconfig="+kubeconfig+"&context=namespaced", "--name", prefix+"-*"); r.err != nil || !strings.Contains(r.stdout, prefix+"-team-a") {
		t.Errorf("locks ls of one namespace by the same account: %v\n%s", r.err, r.stdout)
	}
	if r := runCmd(t, false, nil, "unlock", prefix+"-team-a", "--dsn", every, "--force", "--yes"); ExitCode(r.err) != CodeUsage {
		t.Errorf("unlock on every namespace: exit %d (%v), want %d", ExitCode(r.err), r.err, CodeUsage)
	}
}
