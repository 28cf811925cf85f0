// Hand-over microbenchmark: pass A (in -> mid) and pass B (mid -> out), each a plain
// copy of `words` u64 by groups of 128 items x 8 words, as two launches against one
// ticketed launch whose B groups wait for all A groups (membar.gl + volatile poll).
use ocl::{flags, Buffer, Event, ProQue, Queue};
fn ev_us(e: &Event) -> f64 {
    let s = e.profiling_info(ocl::enums::ProfilingInfo::Start).unwrap().time().unwrap();
    let t = e.profiling_info(ocl::enums::ProfilingInfo::End).unwrap().time().unwrap();
    (t - s) as f64 / 1000.0
}
fn med(mut v: Vec<f64>) -> f64 { v.sort_by(|a, b| a.partial_cmp(b).unwrap()); v[v.len() / 2] }
fn main() {
    let nvidia = std::env::args().any(|a| a == "--ptx");
    let backoff = std::env::args().any(|a| a == "--backoff");
    let one_fence = std::env::args().any(|a| a == "--one-fence");
    let mut opts = String::new();
    if backoff { opts.push_str("#define BACKOFF() __asm__ volatile(\"nanosleep.u32 500;\" ::: \"memory\")\n"); } else { opts.push_str("#define BACKOFF()\n"); }
    if one_fence { opts.push_str("#define ONE_FENCE\n"); }
    let hw = std::env::args().any(|a| a == "--hw-ticket");
    let nowait = std::env::args().any(|a| a == "--no-wait");
    if hw { opts.push_str("#define HW_TICKET\n"); }
    if nowait { opts.push_str("#define NO_WAIT\n"); }
    println!("hw_ticket {hw} no_wait (results wrong) {nowait}");
    println!("backoff {backoff} one_fence {one_fence}");
    let fence = if nvidia { "#define FENCE() __asm__ volatile(\"membar.gl;\" ::: \"memory\")\n" } else { "#define FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)\n" };
    let src = format!("{opts}{fence}{}", r#"
#define W 8
__kernel void pass(__global const ulong *in, __global ulong *out) {
    size_t base = get_group_id(0) * 128 * W + get_local_id(0);
    for (int i = 0; i < W; i++) out[base + i * 128] = in[base + i * 128] + 1;
}
__kernel void chained(__global const ulong *in, __global ulong *mid, __global ulong *out,
                      __global uint *counters, uint first) {
    __local uint slot;
#ifdef HW_TICKET
    uint t = get_group_id(0);
#else
    if (get_local_id(0) == 0) slot = atomic_inc(&counters[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint t = slot;
#endif
    bool a = t < first;
    size_t base = (size_t)(a ? t : t - first) * 128 * W + get_local_id(0);
    if (a) for (int i = 0; i < W; i++) mid[base + i * 128] = in[base + i * 128] + 1;
#ifndef ONE_FENCE
    FENCE();
#endif
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
#ifdef ONE_FENCE
        FENCE();
#endif
        if (a) atomic_inc(&counters[1]);
#ifndef NO_WAIT
        else { while (*(volatile __global uint *)&counters[1] < first) BACKOFF(); FENCE(); }
#endif
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (!a) for (int i = 0; i < W; i++) out[base + i * 128] = mid[base + i * 128] + 1;
    if (get_local_id(0) == 0 && atomic_inc(&counters[2]) == get_num_groups(0) - 1) {
        atomic_xchg(&counters[0], 0u); atomic_xchg(&counters[1], 0u); atomic_xchg(&counters[2], 0u);
    }
}
"#);
    let platform = ocl::Platform::list().into_iter()
        .find(|p| !nvidia || p.name().unwrap_or_default().contains("NVIDIA")).unwrap();
    println!("platform {}", platform.name().unwrap());
    let pq = ProQue::builder().platform(platform).src(src).dims(1).build().unwrap();
    let q = Queue::new(pq.context(), pq.device(), Some(flags::CommandQueueProperties::PROFILING_ENABLE)).unwrap();
    for &words in &[1usize << 18, 1 << 21, 1 << 24] {
        let groups = (words / (128 * 8)) as u32;
        let mk = || Buffer::<u64>::builder().queue(q.clone()).len(words).fill_val(1).build().unwrap();
        let (inb, mid, out) = (mk(), mk(), mk());
        let counters = Buffer::<u32>::builder().queue(q.clone()).len(4).fill_val(0).build().unwrap();
        let ka = pq.kernel_builder("pass").queue(q.clone()).arg(&inb).arg(&mid).global_work_size(words / 8).local_work_size(128).build().unwrap();
        let kb = pq.kernel_builder("pass").queue(q.clone()).arg(&mid).arg(&out).global_work_size(words / 8).local_work_size(128).build().unwrap();
        let kc = pq.kernel_builder("chained").queue(q.clone()).arg(&inb).arg(&mid).arg(&out).arg(&counters).arg(groups).global_work_size(words / 4).local_work_size(128).build().unwrap();
        let (mut two, mut one, mut wall2, mut wall1) = (vec![], vec![], vec![], vec![]);
        for rep in 0..60 {
            let t = std::time::Instant::now();
            let (mut ea, mut eb) = (Event::empty(), Event::empty());
            unsafe { ka.cmd().enew(&mut ea).enq().unwrap(); kb.cmd().enew(&mut eb).enq().unwrap(); }
            q.finish().unwrap();
            let w2 = t.elapsed().as_secs_f64() * 1e6;
            let t = std::time::Instant::now();
            let mut ec = Event::empty();
            unsafe { kc.cmd().enew(&mut ec).enq().unwrap(); }
            q.finish().unwrap();
            let w1 = t.elapsed().as_secs_f64() * 1e6;
            if rep >= 10 { two.push(ev_us(&ea) + ev_us(&eb)); one.push(ev_us(&ec)); wall2.push(w2); wall1.push(w1); }
        }
        let mut v = vec![0u64; words]; out.read(&mut v).enq().unwrap();
        let ok = v.iter().all(|&x| x == 3);
        println!("words 2^{:2}: two launches {:6.1} us events ({:6.1} wall), chained {:6.1} us event ({:6.1} wall), correct {ok}",
            words.trailing_zeros(), med(two), med(wall2), med(one), med(wall1));
    }
}
