package claim_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/schedlock/schedlock/claim"
	_ "github.com/schedlock/schedlock/dialects/sqlite" // the backend of the example's DSN; postgres://… needs dialects/postgres
)

// Two workers share a queue on one SQLite file; every row is claimed
// once. With a server, pass its DSN instead (postgres://…, mysql://…).
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "claims")
	defer os.RemoveAll(dir)

	q, err := claim.Open(ctx, "sqlite:"+filepath.Join(dir, "jobs.db")+"?x-create-file=true", claim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	if err := q.CreateTable(ctx); err != nil { // the default schedlock_tasks, only on request
		log.Fatal(err)
	}
	if err := q.Add(ctx, claim.NewTask{Type: "mail", Payload: []byte("to: ops")}, claim.NewTask{Type: "report", Priority: 9}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("strategy:", q.Strategy())

	tasks, err := q.Claim(ctx, claim.Request{Owner: "worker-1", Max: 10})
	if err != nil {
		log.Fatal(err)
	}
	for i := range tasks {
		fmt.Println("claimed", tasks[i].Type, "priority", tasks[i].Priority)
		if err := q.Complete(ctx, &tasks[i]); err != nil {
			log.Fatal(err)
		}
	}
	again, _ := q.Claim(ctx, claim.Request{Owner: "worker-2", Max: 10})
	fmt.Println("left for worker-2:", len(again))
	// Output:
	// strategy: optimistic
	// claimed report priority 9
	// claimed mail priority 0
	// left for worker-2: 0
}

// A worker finishes its whole batch in one statement; a task whose claim
// another worker took over in the meantime comes back in lost.
func ExampleQueue_Finish() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "claims")
	defer os.RemoveAll(dir)

	q, err := claim.Open(ctx, "sqlite:"+filepath.Join(dir, "jobs.db")+"?x-create-file=true", claim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	if err := q.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	if err := q.Add(ctx, claim.NewTask{Type: "a", Priority: 3}, claim.NewTask{Type: "b", Priority: 2}, claim.NewTask{Type: "c", Priority: 1}); err != nil {
		log.Fatal(err)
	}
	tasks, err := q.Claim(ctx, claim.Request{Owner: "worker-1", Max: 10})
	if err != nil {
		log.Fatal(err)
	}
	stale := tasks[2] // a copy from before an extension: no longer the claim's version
	if err := q.Extend(ctx, &tasks[2], 0); err != nil {
		log.Fatal(err)
	}
	lost, err := q.Finish(ctx,
		claim.Result{Task: &tasks[0], Outcome: claim.Completed},
		claim.Result{Task: &tasks[1], Outcome: claim.GivenBack},
		claim.Result{Task: &stale, Outcome: claim.Completed})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("no longer ours:", lost)
	again, _ := q.Claim(ctx, claim.Request{Owner: "worker-2", Max: 10})
	fmt.Println("claimable again:", len(again), again[0].Type)
	// Output:
	// no longer ours: [2]
	// claimable again: 1 b
}
