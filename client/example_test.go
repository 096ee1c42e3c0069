package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hybridkv/hybridkv/client"
)

// A strong write, then a weak read of it in the same session (a session
// reads its own writes at either level), and an asynchronous write whose
// Result says how it completed.
func Example() {
	replicas, stop := exampleCluster()
	defer stop()

	c, err := client.New(client.Config{Protocol: "curp-ho", Replicas: replicas, Site: 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	s := c.NewSession()
	if err := s.Put(ctx, "42", []byte("hello"), client.Strong); err != nil {
		fmt.Println(err)
		return
	}
	v, found, err := s.Get(ctx, "42", client.Weak)
	fmt.Printf("%q %v %v\n", v, found, err)

	done := make(chan client.Result, 1)
	s.Submit(client.Put, "43", []byte("world"), client.Weak, func(r client.Result) { done <- r })
	r := <-done
	var path client.Path = r.Path
	fmt.Println(path, r.Err)
	// Output:
	// "hello" true <nil>
	// weak <nil>
}
