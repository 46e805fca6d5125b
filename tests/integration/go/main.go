// Command franzgo drives franz-go (github.com/twmb/franz-go) against a broker for
// tests/integration/test_franz_go.py. Each subcommand prints JSON lines to stdout, one
// object per event, and exits non-zero (with the reason on stderr) when something the
// test relies on fails:
//
//	produce    idempotent producer (franz-go's default) of -n records with distinct keys
//	sentinels  one plain record per partition (explicit partitions), to mark the ends
//	consume    a group (-group) or direct consumer, read_committed or not, until -n records
//	           or -stop-count records whose key starts with -stop-prefix; -commit commits
//	txn        a transactional producer: -txns transactions of -per records, every
//	           -abort-every-th aborted
//	eos        consume-transform-produce in a GroupTransactSession: read_committed input,
//	           output to another topic, offsets committed in the transaction
//	offsets    kadm: end offsets at both isolation levels and a group's committed offsets
//
// Every subcommand takes -tls-ca (TLS, the broker's certificate checked against this CA
// file) and -sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 with -sasl-user and
// -sasl-password, for the security protocols SSL, SASL_PLAINTEXT and SASL_SSL.
//
// Bytes (keys, values, header values) are base64 in the JSON (Go's encoding of []byte),
// a null key or value is null. txn and eos end with a "done" line that also counts the
// Produce batches the broker refused with a retriable error (which franz-go resends).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// baseTimestamp is the CreateTime of produced record i: baseTimestamp + i ms.
var baseTimestamp = time.UnixMilli(1_700_000_000_000)

type header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// rec is one record as acknowledged or as consumed.
type rec struct {
	Event     string   `json:"event"`
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []header `json:"headers"`
	Timestamp int64    `json:"timestamp"`
	// Consumed records: the batch's producer id and epoch (-1 for a plain producer).
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	// txn: the transaction the record was written in and how it ended.
	Txn       *int  `json:"txn,omitempty"`
	Committed *bool `json:"committed,omitempty"`
}

var out = json.NewEncoder(os.Stdout)

func emit(v any) {
	if err := out.Encode(v); err != nil {
		fatal("writing stdout: %v", err)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "franzgo: "+format+"\n", args...)
	os.Exit(1)
}

func toRec(event string, r *kgo.Record) rec {
	hs := make([]header, 0, len(r.Headers))
	for _, h := range r.Headers {
		hs = append(hs, header{h.Key, h.Value})
	}
	return rec{Event: event, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Headers: hs, Timestamp: r.Timestamp.UnixMilli(),
		ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch}
}

// common flags and client options
type common struct {
	brokers        string
	timeout        time.Duration
	logLevel       string
	metadataMinAge time.Duration
	tlsCA          string
	saslMechanism  string
	saslUser       string
	saslPassword   string
	log            *countingLogger
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.brokers, "brokers", "127.0.0.1:9092", "bootstrap brokers, comma separated")
	fs.DurationVar(&c.timeout, "timeout", 60*time.Second, "give up (exit 1) after this long")
	fs.StringVar(&c.logLevel, "log-level", "warn", "franz-go's log on stderr: error, warn, info or debug")
	fs.DurationVar(&c.metadataMinAge, "metadata-min-age", 0, "kgo.MetadataMinAge (0: franz-go's default, 5s)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "connect over TLS, trusting this PEM CA file")
	fs.StringVar(&c.saslMechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&c.saslUser, "sasl-user", "", "SASL user name")
	fs.StringVar(&c.saslPassword, "sasl-password", "", "SASL password")
}

// securityOpts: TLS and SASL as the flags ask.
func (c *common) securityOpts() []kgo.Opt {
	var opts []kgo.Opt
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			fatal("reading -tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fatal("no certificate in %s", c.tlsCA)
		}
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	var mech sasl.Mechanism
	switch c.saslMechanism {
	case "":
		return opts
	case "PLAIN":
		mech = plain.Auth{User: c.saslUser, Pass: c.saslPassword}.AsMechanism()
	case "SCRAM-SHA-256":
		mech = scram.Auth{User: c.saslUser, Pass: c.saslPassword}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		mech = scram.Auth{User: c.saslUser, Pass: c.saslPassword}.AsSha512Mechanism()
	default:
		fatal("unknown -sasl-mechanism %q", c.saslMechanism)
	}
	return append(opts, kgo.SASL(mech))
}

func (c *common) opts() []kgo.Opt {
	levels := map[string]kgo.LogLevel{"error": kgo.LogLevelError, "warn": kgo.LogLevelWarn,
		"info": kgo.LogLevelInfo, "debug": kgo.LogLevelDebug}
	level, ok := levels[c.logLevel]
	if !ok {
		fatal("unknown -log-level %q", c.logLevel)
	}
	c.log = &countingLogger{level: level, out: kgo.BasicLogger(os.Stderr, level, func() string {
		return time.Now().Format("15:04:05.000 ")
	})}
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(c.brokers, ",")...), kgo.WithLogger(c.log)}
	opts = append(opts, c.securityOpts()...)
	if c.metadataMinAge > 0 {
		opts = append(opts, kgo.MetadataMinAge(c.metadataMinAge))
	}
	return opts
}

// countingLogger passes franz-go's log on at the chosen level and counts the partitions of
// Produce responses that refused a batch with a retriable error (from franz-go's debug line
// "produced ... to: topic[p{retrying@...(ERROR: ...)}]"; franz-go retries those by itself,
// so they are seen nowhere else).
type countingLogger struct {
	level   kgo.LogLevel
	out     kgo.Logger
	mu      sync.Mutex
	retried map[string]int // error name -> partitions refused with it
}

func (l *countingLogger) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *countingLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level == kgo.LogLevelDebug && msg == "produced" {
		for _, kv := range keyvals {
			s, _ := kv.(string)
			for _, part := range strings.Split(s, "retrying@")[1:] {
				name, _, _ := strings.Cut(part[strings.Index(part, "(")+1:], ":")
				l.mu.Lock()
				if l.retried == nil {
					l.retried = map[string]int{}
				}
				l.retried[name]++
				l.mu.Unlock()
			}
		}
	}
	if level <= l.level {
		l.out.Log(level, msg, keyvals...)
	}
}

func (l *countingLogger) retries() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[string]int{}
	for k, v := range l.retried {
		m[k] = v
	}
	return m
}

func (c *common) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.timeout)
}

func codec(name string) kgo.CompressionCodec {
	switch name {
	case "none":
		return kgo.NoCompression()
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	fatal("unknown codec %q", name)
	return kgo.NoCompression()
}

var words = strings.Fields("alpha beta gamma delta epsilon broker topic partition offset " +
	"segment record batch header key value leader replica commit fetch produce franz strata")

// value returns record i's value: compressible text with a few arbitrary bytes (NUL, 0xff,
// invalid UTF-8) in it; every 50th is null and every 50th (+1) empty.
func value(rnd *rand.Rand, prefix string, i int) []byte {
	switch i % 50 {
	case 17:
		return nil
	case 18:
		return []byte{}
	}
	var b []byte
	b = fmt.Appendf(b, "%s value %d:", prefix, i)
	for n := rnd.IntN(40); n >= 0; n-- {
		b = append(b, ' ')
		b = append(b, words[rnd.IntN(len(words))]...)
	}
	b = append(b, 0, 0xff, 0xfe, byte(rnd.IntN(256)), '\n')
	return b
}

// makeRecords returns n records keyed prefix-k<i> with explicit timestamps and headers.
func makeRecords(topic, prefix string, n int, seed uint64) []*kgo.Record {
	rnd := rand.New(rand.NewPCG(seed, uint64(len(prefix))))
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{
			Topic:     topic,
			Key:       fmt.Appendf(nil, "%s-k%d", prefix, i),
			Value:     value(rnd, prefix, i),
			Timestamp: baseTimestamp.Add(time.Duration(i) * time.Millisecond),
			Headers: []kgo.RecordHeader{
				{Key: "i", Value: fmt.Appendf(nil, "%d", i)},
				{Key: "empty", Value: []byte{}},
				{Key: "dup", Value: []byte("first")},
				{Key: "dup", Value: []byte("second")},
			},
		}
	}
	return rs
}

// produceAll produces rs with promises and waits for all of them; fails on any error.
func produceAll(ctx context.Context, cl *kgo.Client, rs []*kgo.Record) {
	errs := make(chan error, len(rs))
	for _, r := range rs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) { errs <- err })
	}
	for range rs {
		if err := <-errs; err != nil {
			fatal("produce: %v", err)
		}
	}
}

func cmdProduce(args []string) {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	var c common
	c.register(fs)
	topic := fs.String("topic", "", "topic")
	n := fs.Int("n", 1000, "records")
	prefix := fs.String("prefix", "r", "key prefix")
	seed := fs.Uint64("seed", 1, "value seed")
	compression := fs.String("codec", "none", "none, gzip, snappy, lz4 or zstd")
	linger := fs.Duration("linger", 5*time.Millisecond, "producer linger")
	fs.Parse(args)

	cl, err := kgo.NewClient(append(c.opts(),
		kgo.RequiredAcks(kgo.AllISRAcks()), // the idempotent default, spelled out
		kgo.ProducerBatchCompression(codec(*compression)),
		kgo.ProducerLinger(*linger))...)
	if err != nil {
		fatal("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := c.context()
	defer cancel()
	rs := makeRecords(*topic, *prefix, *n, *seed)
	produceAll(ctx, cl, rs)
	for _, r := range rs {
		emit(toRec("acked", r))
	}
}

func cmdSentinels(args []string) {
	fs := flag.NewFlagSet("sentinels", flag.ExitOnError)
	var c common
	c.register(fs)
	topic := fs.String("topic", "", "topic")
	partitions := fs.Int("partitions", 1, "partitions of the topic")
	prefix := fs.String("prefix", "end-", "key prefix; the key is prefix<partition>")
	fs.Parse(args)

	cl, err := kgo.NewClient(append(c.opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		fatal("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := c.context()
	defer cancel()
	var rs []*kgo.Record
	for p := 0; p < *partitions; p++ {
		rs = append(rs, &kgo.Record{Topic: *topic, Partition: int32(p),
			Key: fmt.Appendf(nil, "%s%d", *prefix, p), Value: []byte("end")})
	}
	produceAll(ctx, cl, rs)
	for _, r := range rs {
		emit(toRec("acked", r))
	}
}

func isolation(name string) kgo.IsolationLevel {
	switch name {
	case "committed":
		return kgo.ReadCommitted()
	case "uncommitted":
		return kgo.ReadUncommitted()
	}
	fatal("unknown isolation %q", name)
	return kgo.ReadUncommitted()
}

// stopper tells when a consumer has read what it was asked for.
type stopper struct {
	n, stopCount, seen, stopSeen int
	stopPrefix                   string
}

func (s *stopper) add(r *kgo.Record) {
	s.seen++
	if s.stopPrefix != "" && strings.HasPrefix(string(r.Key), s.stopPrefix) {
		s.stopSeen++
	}
}

func (s *stopper) done() bool {
	return (s.n > 0 && s.seen >= s.n) || (s.stopCount > 0 && s.stopSeen >= s.stopCount)
}

func cmdConsume(args []string) {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	var c common
	c.register(fs)
	topics := fs.String("topics", "", "topics, comma separated")
	group := fs.String("group", "", "consumer group (none: a direct consumer from the start)")
	iso := fs.String("isolation", "uncommitted", "committed or uncommitted")
	var st stopper
	fs.IntVar(&st.n, "n", 0, "stop after this many records")
	fs.StringVar(&st.stopPrefix, "stop-prefix", "", "key prefix of the records to count for -stop-count")
	fs.IntVar(&st.stopCount, "stop-count", 0, "stop after this many records keyed -stop-prefix...")
	commit := fs.Bool("commit", false, "commit the group's offsets at the end")
	fs.Parse(args)

	opts := append(c.opts(),
		kgo.ConsumeTopics(strings.Split(*topics, ",")...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(isolation(*iso)),
		kgo.FetchMaxWait(500*time.Millisecond))
	if *group != "" {
		opts = append(opts, kgo.ConsumerGroup(*group), kgo.DisableAutoCommit())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fatal("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := c.context()
	defer cancel()

	for !st.done() {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			fatal("timed out after %d records (%d stop records)", st.seen, st.stopSeen)
		}
		for _, fe := range fetches.Errors() {
			fatal("fetch %s[%d]: %v", fe.Topic, fe.Partition, fe.Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			st.add(r)
			emit(toRec("record", r))
		})
	}
	if *commit {
		if *group == "" {
			fatal("-commit needs -group")
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			fatal("commit: %v", err)
		}
		emit(map[string]any{"event": "committed", "offsets": groupOffsets(ctx, cl, *group)})
	}
	emit(map[string]any{"event": "done", "records": st.seen})
}

// groupOffsets is the group's committed offsets as kadm reads them back (OffsetFetch).
func groupOffsets(ctx context.Context, cl *kgo.Client, group string) map[string]map[int32]int64 {
	os, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err == nil {
		err = os.Error()
	}
	if err != nil {
		fatal("fetch offsets of %s: %v", group, err)
	}
	m := map[string]map[int32]int64{}
	os.Each(func(o kadm.OffsetResponse) {
		if m[o.Topic] == nil {
			m[o.Topic] = map[int32]int64{}
		}
		m[o.Topic][o.Partition] = o.At
	})
	return m
}

func cmdTxn(args []string) {
	fs := flag.NewFlagSet("txn", flag.ExitOnError)
	var c common
	c.register(fs)
	topic := fs.String("topic", "", "topic")
	txnID := fs.String("transactional-id", "", "transactional.id")
	txns := fs.Int("txns", 6, "transactions")
	per := fs.Int("per", 20, "records per transaction")
	abortEvery := fs.Int("abort-every", 2, "transaction t is aborted when t % this == this - 1 (0: never)")
	prefix := fs.String("prefix", "t", "key prefix")
	fs.Parse(args)

	cl, err := kgo.NewClient(append(c.opts(),
		kgo.TransactionalID(*txnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.ProducerLinger(5*time.Millisecond))...)
	if err != nil {
		fatal("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := c.context()
	defer cancel()

	for t := 0; t < *txns; t++ {
		began := time.Now()
		commit := *abortEvery == 0 || t%*abortEvery != *abortEvery-1
		if err := cl.BeginTransaction(); err != nil {
			fatal("begin %d: %v", t, err)
		}
		rs := makeRecords(*topic, fmt.Sprintf("%s%d", *prefix, t), *per, uint64(t)+1)
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			fatal("produce in transaction %d: %v", t, err)
		}
		if !commit {
			if err := cl.AbortBufferedRecords(ctx); err != nil { // nothing is buffered
				fatal("abort buffered records %d: %v", t, err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			fatal("end transaction %d (commit %v): %v", t, commit, err)
		}
		for _, r := range rs {
			x := toRec("acked", r)
			x.Txn, x.Committed = &t, &commit
			emit(x)
		}
		emit(map[string]any{"event": "ended", "txn": t, "committed": commit, "records": len(rs),
			"ms": time.Since(began).Milliseconds()})
	}
	emit(map[string]any{"event": "done", "produce_retries": c.log.retries()})
}

func cmdEOS(args []string) {
	fs := flag.NewFlagSet("eos", flag.ExitOnError)
	var c common
	c.register(fs)
	in := fs.String("in", "", "input topic")
	outTopic := fs.String("out", "", "output topic")
	group := fs.String("group", "", "consumer group")
	txnID := fs.String("transactional-id", "", "transactional.id")
	n := fs.Int("n", 0, "stop once this many input records are copied in committed transactions")
	abortEvery := fs.Int("abort-every", 0, "end the session's transaction k with an abort when k % this == this - 1 (0: never)")
	maxPoll := fs.Int("max-poll", 25, "records per transaction at most")
	fs.Parse(args)

	s, err := kgo.NewGroupTransactSession(append(c.opts(),
		kgo.TransactionalID(*txnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.ConsumerGroup(*group),
		kgo.ConsumeTopics(*in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.ProducerLinger(5*time.Millisecond))...)
	if err != nil {
		fatal("session: %v", err)
	}
	defer s.Close()
	ctx, cancel := c.context()
	defer cancel()

	copied := 0
	for k := 0; copied < *n; {
		fetches := s.PollRecords(ctx, *maxPoll)
		if ctx.Err() != nil {
			fatal("timed out after %d records copied", copied)
		}
		for _, fe := range fetches.Errors() {
			fatal("fetch %s[%d]: %v", fe.Topic, fe.Partition, fe.Err)
		}
		if fetches.Empty() {
			continue
		}
		if err := s.Begin(); err != nil {
			fatal("begin %d: %v", k, err)
		}
		var rs []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			hs := append([]kgo.RecordHeader{}, r.Headers...)
			hs = append(hs, kgo.RecordHeader{Key: "from",
				Value: fmt.Appendf(nil, "%s/%d/%d", r.Topic, r.Partition, r.Offset)})
			rs = append(rs, &kgo.Record{Topic: *outTopic, Key: r.Key, Value: r.Value,
				Headers: hs, Timestamp: r.Timestamp})
		})
		if err := s.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			fatal("produce in transaction %d: %v", k, err)
		}
		want := *abortEvery == 0 || k%*abortEvery != *abortEvery-1
		committed, err := s.End(ctx, kgo.TransactionEndTry(want))
		if err != nil {
			fatal("end transaction %d (commit %v): %v", k, want, err)
		}
		if committed {
			copied += len(rs)
		}
		emit(map[string]any{"event": "ended", "txn": k, "want_commit": want,
			"committed": committed, "records": len(rs)})
		k++
	}
	emit(map[string]any{"event": "done", "copied": copied, "produce_retries": c.log.retries()})
}

func cmdOffsets(args []string) {
	fs := flag.NewFlagSet("offsets", flag.ExitOnError)
	var c common
	c.register(fs)
	topics := fs.String("topics", "", "topics, comma separated")
	group := fs.String("group", "", "also the committed offsets of this group")
	fs.Parse(args)

	cl, err := kgo.NewClient(c.opts()...)
	if err != nil {
		fatal("client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := c.context()
	defer cancel()
	ts := strings.Split(*topics, ",")
	conv := func(what string, l kadm.ListedOffsets, err error) map[string]map[int32]int64 {
		if err == nil {
			err = l.Error()
		}
		if err != nil {
			fatal("%s: %v", what, err)
		}
		m := map[string]map[int32]int64{}
		l.Each(func(o kadm.ListedOffset) {
			if m[o.Topic] == nil {
				m[o.Topic] = map[int32]int64{}
			}
			m[o.Topic][o.Partition] = o.Offset
		})
		return m
	}
	end, err := adm.ListEndOffsets(ctx, ts...)
	res := map[string]any{"event": "offsets", "end": conv("list end offsets", end, err)}
	stable, err := adm.ListCommittedOffsets(ctx, ts...)
	res["stable"] = conv("list committed (read_committed end) offsets", stable, err)
	start, err := adm.ListStartOffsets(ctx, ts...)
	res["start"] = conv("list start offsets", start, err)
	if *group != "" {
		res["group"] = groupOffsets(ctx, cl, *group)
	}
	emit(res)
}

func main() {
	cmds := map[string]func([]string){
		"produce": cmdProduce, "sentinels": cmdSentinels, "consume": cmdConsume,
		"txn": cmdTxn, "eos": cmdEOS, "offsets": cmdOffsets,
	}
	if len(os.Args) < 2 || cmds[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: franzgo produce|sentinels|consume|txn|eos|offsets [flags]")
		os.Exit(2)
	}
	cmds[os.Args[1]](os.Args[2:])
}
