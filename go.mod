module github.com/hybridkv/hybridkv

go 1.26.8

require (
	go.etcd.io/raft/v3 v3.7.0
	google.golang.org/protobuf v1.36.11
)

require github.com/stretchr/testify v1.12.1 // indirect
