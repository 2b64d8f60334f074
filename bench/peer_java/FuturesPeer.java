/* FuturesPeer.java: the Java peer of bench_futures (bench/wl_futures.c): the same three
 * workloads with RecursiveTask fork()/join() in a ForkJoinPool of P threads, written the way the
 * ForkJoinTask documentation writes them.
 *
 *   java -cp DIR FuturesPeer --fib N --nqueens N --sum N --leaf L --workers 1,2 --reps R
 *        --workloads fib,nqueens,sum
 *
 * For each workload and worker count: a fresh pool, WARMUPS untimed runs (the JIT compiles the
 * tasks' code), then R timed runs of pool.invoke. Prints one line each:
 *   workload  workers  median-seconds  answer
 * The array to sum holds value(i) for i < N, the formula of wl_futures.c's sum_value.
 */
import java.util.ArrayList;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

public final class FuturesPeer {
    private static final int WARMUPS = 3;

    /* fork fib(n-1), compute fib(n-2) here, join */
    static final class Fib extends RecursiveTask<Long> {
        final int n;

        Fib(int n) {
            this.n = n;
        }

        @Override
        protected Long compute() {
            if (n < 2)
                return (long) n;
            Fib f1 = new Fib(n - 1);
            f1.fork();
            long f2 = new Fib(n - 2).compute();
            return f1.join() + f2;
        }
    }

    /* a task per legal placement in the next row, all forked, then joined oldest first */
    static final class Queens extends RecursiveTask<Long> {
        final int n, row, cols, d1, d2;

        Queens(int n, int row, int cols, int d1, int d2) {
            this.n = n;
            this.row = row;
            this.cols = cols;
            this.d1 = d1;
            this.d2 = d2;
        }

        @Override
        protected Long compute() {
            if (row == n)
                return 1L;
            ArrayList<Queens> kids = new ArrayList<>(n);
            for (int avail = ~(cols | d1 | d2) & ((1 << n) - 1); avail != 0; avail &= avail - 1) {
                int bit = avail & -avail;
                Queens q = new Queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >>> 1);
                q.fork();
                kids.add(q);
            }
            long count = 0;
            for (Queens q : kids)
                count += q.join();
            return count;
        }
    }

    /* fork the left half, compute the right half here, join */
    static final class Sum extends RecursiveTask<Long> {
        final int[] v;
        final int lo, hi, leaf;

        Sum(int[] v, int lo, int hi, int leaf) {
            this.v = v;
            this.lo = lo;
            this.hi = hi;
            this.leaf = leaf;
        }

        @Override
        protected Long compute() {
            int n = hi - lo;
            if (n <= leaf) {
                long s = 0;
                for (int i = lo; i < hi; i++)
                    s += v[i];
                return s;
            }
            int mid = lo + n / 2;
            Sum left = new Sum(v, lo, mid, leaf);
            left.fork();
            long right = new Sum(v, mid, hi, leaf).compute();
            return left.join() + right;
        }
    }

    interface Root {
        RecursiveTask<Long> make();
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static void measure(String name, Root root, int workers, int reps) {
        ForkJoinPool pool = new ForkJoinPool(workers);
        long answer = 0;
        for (int i = 0; i < WARMUPS; i++)
            answer = pool.invoke(root.make());
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            RecursiveTask<Long> task = root.make();
            long t0 = System.nanoTime();
            long got = pool.invoke(task);
            t[i] = (System.nanoTime() - t0) * 1e-9;
            if (got != answer)
                answer = -1; /* runs disagree: the driver sees a wrong answer */
        }
        pool.shutdown();
        System.out.printf("%s %d %.9f %d%n", name, workers, median(t), answer);
    }

    public static void main(String[] args) {
        int fibN = 28, nqN = 11, sumN = 1 << 22, leaf = 16, reps = 3;
        String workers = "1,2", workloads = "fib,nqueens,sum";
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
            case "--fib": fibN = Integer.parseInt(v); break;
            case "--nqueens": nqN = Integer.parseInt(v); break;
            case "--sum": sumN = Integer.parseInt(v); break;
            case "--leaf": leaf = Integer.parseInt(v); break;
            case "--reps": reps = Integer.parseInt(v); break;
            case "--workers": workers = v; break;
            case "--workloads": workloads = v; break;
            default:
                System.err.println("FuturesPeer: unknown option " + args[i]);
                System.exit(2);
            }
        }
        int[] v = new int[sumN];
        for (int i = 0; i < sumN; i++)
            v[i] = (int) (((i * 0x9E3779B1L) & 0xFFFFFFFFL) >>> 20);
        final int fn = fibN, qn = nqN, lf = leaf;
        for (String w : workloads.split(",")) {
            for (String p : workers.split(",")) {
                int np = Integer.parseInt(p);
                switch (w) {
                case "fib": measure(w, () -> new Fib(fn), np, reps); break;
                case "nqueens": measure(w, () -> new Queens(qn, 0, 0, 0, 0), np, reps); break;
                case "sum": measure(w, () -> new Sum(v, 0, v.length, lf), np, reps); break;
                default:
                    System.err.println("FuturesPeer: unknown workload " + w);
                    System.exit(2);
                }
            }
        }
    }
}
