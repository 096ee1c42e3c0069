module github.com/hybridkv/hybridkv

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1
	go.etcd.io/raft/v3 v3.7.0
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.5
	google.golang.org/protobuf v1.36.11
)
