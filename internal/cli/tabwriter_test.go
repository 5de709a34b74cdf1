package cli

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"text/tabwriter"
)

// kubectlTabWriter is the layout kubectl uses: text/tabwriter with minimum
// width 6, tab width 4, padding 3, padded with spaces.
func kubectlTabWriter(out *bytes.Buffer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
}

func TestTabWriterMatchesKubectlLayout(t *testing.T) {
	cases := map[string]string{
		"deployment columns":                    "NAME\tREADY\tUP-TO-DATE\tAVAILABLE\tAGE\nweb\t3/3\t3\t3\t5m\n",
		"narrow columns keep the minimum width": "A\tB\tC\na\tb\tc\n",
		"wide first column":                     "NAME\tAGE\nweb-7d4b9c8f5d-x2x9z\t12s\na\t1d\n",
		"single column":                         "NAME\nweb\nsome-longer-name\n",
		"empty cells":                           "NAME\tIP\tNODE\nweb\t\tnode-1\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			kw := kubectlTabWriter(&want)
			kw.Write([]byte(in))
			kw.Flush()
			w := NewTabWriter(&got)
			w.Write([]byte(in))
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got\n%q\nwant\n%q", got.String(), want.String())
			}
		})
	}
}

func TestTabWriterMatchesKubectlLayoutOnRandomTables(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"", "a", "ab", "web", "3/3", "Running", "10.244.0.12", "<none>", "nginx:1.27", "deployment.apps/web", "x y"}
	for i := 0; i < 500; i++ {
		ncols := 1 + rng.Intn(6)
		nrows := 1 + rng.Intn(5)
		var sb strings.Builder
		for r := 0; r < nrows; r++ {
			for c := 0; c < ncols; c++ {
				if c > 0 {
					sb.WriteByte('\t')
				}
				sb.WriteString(words[rng.Intn(len(words))])
			}
			sb.WriteByte('\n')
		}
		var want, got bytes.Buffer
		kw := kubectlTabWriter(&want)
		kw.Write([]byte(sb.String()))
		kw.Flush()
		w := NewTabWriter(&got)
		w.Write([]byte(sb.String()))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("input %q:\ngot\n%q\nwant\n%q", sb.String(), got.String(), want.String())
		}
	}
}

func TestTabWriterRemembersWidthsAcrossFlushes(t *testing.T) {
	var got bytes.Buffer
	w := NewTabWriter(&got)
	w.Write([]byte("NAME\tREADY\tAGE\nweb\t0/3\t1s\n"))
	w.Flush()
	w.Write([]byte("web-with-a-long-name\t3/3\t5s\n"))
	w.Flush()
	w.Write([]byte("web\t3/3\t6s\n"))
	w.Flush()
	want := "NAME   READY   AGE\n" +
		"web    0/3     1s\n" +
		"web-with-a-long-name   3/3     5s\n" +
		"web                    3/3     6s\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}
