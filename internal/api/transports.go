package api

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// logClient reaches node agents; logs may be followed for as long as the
// client reads.
var logClient = &http.Client{Transport: &http.Transport{
	DialContext:     (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	IdleConnTimeout: 90 * time.Second,
}}

// nodeTransport reaches node agents for streams and proxies.
var nodeTransport = logClient.Transport

// proxyTransport carries the proxy subresources. As kube-apiserver's
// proxy transport, it does not verify the certificates of https:
// backends (pods serve self-signed ones).
var proxyTransport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kube-apiserver's proxy transport does the same
	TLSHandshakeTimeout: 10 * time.Second,
	IdleConnTimeout:     90 * time.Second,
	MaxIdleConnsPerHost: 25,
}
