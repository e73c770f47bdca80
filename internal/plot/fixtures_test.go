package plot

import (
	"math"
	"strconv"
	"time"
)

// The golden figures' fixed data: a lab-like path, numbers chosen to
// look like real sweeps so the reference images read as examples too.

var testFooter = Footer{
	Subject: "campaign lab-grid",
	Hosts:   []string{"alpha", "beta"},
	Date:    time.Date(2026, 11, 30, 14, 5, 0, 0, time.UTC),
	Version: "v0.0.0-test",
}

// sweepFixture is goodput against the socket buffer on a 40 ms path,
// one line per test duration, three repetitions each: a window-limited
// rate (window ÷ RTT) capped by a 1 Gbit/s bottleneck.
func sweepFixture() SweepInput {
	windows := []float64{16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}
	in := SweepInput{
		Title:  "Goodput against socket buffer, 40 ms RTT",
		X:      Axis{Label: "Socket buffer (-w)", Quantity: Bytes},
		Y:      Axis{Label: "Goodput", Quantity: BitRate},
		Footer: testFooter,
	}
	for k, dur := range []string{"-t 10s", "-t 60s"} {
		s := SweepSeries{Name: dur}
		for _, w := range windows {
			rate := math.Min(w*8/0.040, 940e6) * (0.80 + 0.1*float64(k))
			s.Points = append(s.Points, SweepPoint{X: w, Values: []float64{rate * 0.95, rate, rate * 1.03}})
		}
		in.Series = append(in.Series, s)
	}
	return in
}

func heatmapFixture() HeatmapInput {
	windows := []float64{64 << 10, 1 << 20, 16 << 20}
	streams := []float64{1, 4, 16}
	in := HeatmapInput{
		Title:   "Goodput over windows × streams",
		X:       Axis{Label: "Socket buffer (-w)", Quantity: Bytes},
		Y:       Axis{Label: "Streams (-P)", Quantity: Number},
		Value:   Axis{Label: "Goodput", Quantity: BitRate},
		XValues: windows,
		YValues: streams,
		Footer:  testFooter,
	}
	for _, p := range streams {
		var row []float64
		for _, w := range windows {
			row = append(row, math.Min(p*w*8/0.040, 940e6))
		}
		in.Cells = append(in.Cells, row)
	}
	in.Cells[2][2] = math.NaN() // a run that failed
	return in
}

func timelineFixture() TimelineInput {
	in := TimelineInput{Title: "One TCP run, 10 s", Footer: testFooter}
	var good, cwnd, rtt, retr []Point
	for i := 0; i < 10; i++ {
		good = append(good, Point{float64(i) + 0.5, 600e6 + 30e6*float64(i%3)})
	}
	for i := 0; i <= 100; i++ {
		t := float64(i) / 10
		c := 400e3 + 30e3*math.Mod(t, 2.5)
		cwnd = append(cwnd, Point{t, c})
		rtt = append(rtt, Point{t, 40 + 10*math.Mod(t, 2.5)})
		r := 0.0
		if i%25 == 24 {
			r = 12
		}
		retr = append(retr, Point{t, r})
	}
	in.Goodput = []TimeSeries{{Name: "client→server", Points: good}}
	in.Cwnd = []TimeSeries{{Name: "stream 1", Points: cwnd}}
	in.RTT = []TimeSeries{{Name: "stream 1", Points: rtt}}
	in.Retransmits = []TimeSeries{{Name: "stream 1", Points: retr}}
	return in
}

func udpmonFixture() UDPMonInput {
	in := UDPMonInput{Title: "UDPmon: rate against spacing", Rate: "Received wire rate", Footer: testFooter}
	for _, size := range []float64{1472, 512} {
		bits := (size + 66) * 8
		s := UDPMonSeries{Name: strconv.Itoa(int(size)) + " B", DatagramBits: bits}
		for sp := 0.0; sp <= 40; sp += 4 {
			rate := 1e9
			if sp > 0 {
				rate = math.Min(rate, bits/(sp/1e6))
			}
			loss := 0.0
			if sp < 8 {
				loss = 2.5 - sp/4
			}
			s.Points = append(s.Points, UDPMonPoint{SpacingUs: sp, BitsPerSecond: rate, LossPercent: loss, ReorderedPercent: 0.1 * loss})
		}
		in.Series = append(in.Series, s)
	}
	return in
}

func latencyFixture() LatencyInput {
	var buckets []Bucket
	// A log-normal-ish RTT around 300 µs with a tail to 20 ms.
	for v := 100.0; v < 20000; v *= 1.25 {
		d := math.Log(v/300) / 0.5
		n := int64(10000 * math.Exp(-d*d/2))
		if v > 2000 {
			n += 3
		}
		if n > 0 {
			buckets = append(buckets, Bucket{From: v, To: v * 1.25, Count: n})
		}
	}
	return LatencyInput{
		Title:  "rr --udp, 64-byte requests",
		Series: []LatencySeries{{Name: "64 B", Buckets: buckets, P50: 300, P99: 1050, P999: 9000}},
		Footer: testFooter,
	}
}

func loadFixture() LoadInput {
	in := LoadInput{
		Title: "Latency under load: 4 TCP streams up",
		Phases: []LoadPhase{
			{Label: "idle", Start: 0, End: 3, P50: 40.2, P99: 41.5},
			{Label: "loaded", Start: 3, End: 13, P50: 180, P99: 320},
			{Label: "after", Start: 13, End: 16, P50: 40.4, P99: 42},
		},
		Footer: testFooter,
	}
	var rtt []Point
	for i := 0; i <= 100; i++ {
		t := 3 + float64(i)/10
		rtt = append(rtt, Point{t, 40 + 150*(1-math.Exp(-float64(i)/15))})
	}
	in.RTT = []TimeSeries{{Name: "load's TCP RTT", Points: rtt}}
	return in
}
