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
