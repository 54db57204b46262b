// overload: an open-loop load of many independent callers, each with a deadline.
// Requests start at a fixed rate (intended times), each in its own goroutine; latency is taken
// from the intended start, so a server that queues shows it. Reports goodput (2xx within the
// deadline, per second), fast rejections (503/429), timeouts, errors, and latency percentiles
// of the 2xx answers. usage: overload -url U -body B -rate R -dur 20s -timeout 1s -conns 512
// (-bodyfile F reads the body from a file; -conns 0: no limit, a connection per caller in flight;
// Go keeps two idle ones, so below capacity most callers reuse one of them)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func pct(v []time.Duration, p float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	return v[int(float64(len(v)-1)*p)]
}

func main() {
	url := flag.String("url", "http://127.0.0.1:3000/api/isEven", "URL")
	body := flag.String("body", `{"input":12345}`, "POST body (empty: GET)")
	rate := flag.Float64("rate", 1000, "requests a second")
	dur := flag.Duration("dur", 20*time.Second, "duration")
	timeout := flag.Duration("timeout", time.Second, "each caller's deadline")
	conns := flag.Int("conns", 512, "at most this many connections")
	bodyFile := flag.String("bodyfile", "", "read the POST body from this file")
	flag.Parse()
	if *bodyFile != "" {
		data, err := os.ReadFile(*bodyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		*body = string(data)
	}
	tr := &http.Transport{MaxConnsPerHost: *conns, MaxIdleConnsPerHost: *conns, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: *timeout}
	// One copy of the body for every request: a copy each (48 KB to 114 KB) was about half of the
	// generator's own CPU past capacity (bench/results/history-2026-11.md).
	bodyBytes := []byte(*body)
	var mu sync.Mutex
	var ok []time.Duration
	late, shed, other, timeouts, errs := 0, 0, 0, 0, 0
	var shedLat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	n := int(*rate * dur.Seconds())
	interval := time.Duration(float64(time.Second) / *rate)
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(due time.Time) {
			defer wg.Done()
			var req *http.Request
			if *body == "" {
				req, _ = http.NewRequest("GET", *url, nil)
			} else {
				req, _ = http.NewRequest("POST", *url, bytes.NewReader(bodyBytes))
				req.Header.Set("content-type", "application/json")
			}
			resp, err := client.Do(req)
			lat := time.Since(due)
			if err != nil {
				mu.Lock()
				if e, isNet := err.(interface{ Timeout() bool }); isNet && e.Timeout() {
					timeouts++
				} else {
					errs++
				}
				mu.Unlock()
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat = time.Since(due)
			mu.Lock()
			switch {
			case resp.StatusCode < 300 && lat <= *timeout:
				ok = append(ok, lat)
			case resp.StatusCode < 300:
				late++
			case resp.StatusCode == 503 || resp.StatusCode == 429:
				shed++
				shedLat = append(shedLat, lat)
			default:
				other++
			}
			mu.Unlock()
		}(due)
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	sort.Slice(ok, func(a, b int) bool { return ok[a] < ok[b] })
	sort.Slice(shedLat, func(a, b int) bool { return shedLat[a] < shedLat[b] })
	fmt.Printf("offered %.0f/s for %s, deadline %s: goodput %.0f/s (%d ok), late %d, shed %d (p50 %s), other %d, timeouts %d, errors %d; ok p50 %s p99 %s p999 %s\n",
		*rate, *dur, *timeout, float64(len(ok))/el, len(ok), late, shed, pct(shedLat, 0.5), other, timeouts, errs,
		pct(ok, 0.5), pct(ok, 0.99), pct(ok, 0.999))
}
