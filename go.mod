module github.com/halfopen/breaker

go 1.26

require go.uber.org/atomic v1.11.0

require github.com/stretchr/testify v1.11.1 // indirect
