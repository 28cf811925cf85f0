//! The device image of one SEAL Ciphertext or Plaintext: a pooled buffer and the number of
//! words SEAL's metadata says it holds (the buffer may be larger: pooled buffers are
//! reused for smaller requests, and an image shrinks without copying when polynomials or
//! a plaintext's last prime are dropped).

use crate::ckks::ops::LevelOps;
use crate::cl::Buffer;
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::memcache::PoolBuffer;

/// Owned by exactly one SEAL object through the bridge (`rust::Box<GpuImage>`). Dropping
/// it returns the buffer to its pool (parked until the frame ends if a frame retains it).
#[derive(Debug, Default)]
pub struct GpuImage {
    buffer: Option<PoolBuffer>,
    len: usize,
}

impl GpuImage {
    pub(crate) fn empty() -> GpuImage {
        GpuImage::default()
    }

    /// The words the image holds (SEAL's uint64_count).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn buffer(&self) -> Result<&Buffer<u64>> {
        match &self.buffer {
            Some(b) if self.len > 0 => Ok(b.buffer()),
            _ => Err(Error::Logic("operand's device image holds no words".into())),
        }
    }

    /// Checks that the image holds `polys` polynomials at the operations' level.
    pub(crate) fn expect(&self, polys: usize, ops: &LevelOps, name: &str) -> Result<()> {
        let want = polys * ops.poly_words();
        if polys == 0 || self.len != want {
            return Err(Error::invalid(format!(
                "{name} is not valid for encryption parameters: its device image holds {} words, \
                 {polys} polynomials of {} primes need {want}",
                self.len,
                ops.primes()
            )));
        }
        Ok(())
    }

    /// Overwrites the image with `data` (blocking: `data` may go away after), reusing the
    /// buffer when it is large enough.
    pub(crate) fn upload(&mut self, graph: &Graph, data: &[u64]) -> Result<()> {
        if data.is_empty() {
            self.buffer = None;
            self.len = 0;
            return Ok(());
        }
        match &self.buffer {
            Some(b) if b.words() >= data.len() => {}
            _ => self.buffer = Some(graph.alloc(data.len())?),
        }
        let buffer = self.buffer.as_ref().expect("allocated above");
        buffer.write(data)?;
        self.len = data.len();
        Ok(())
    }

    /// Copies the first `out.len()` words to the host; waits for the work writing them
    /// (the buffer's queue is in order).
    pub(crate) fn download(&self, out: &mut [u64]) -> Result<()> {
        self.download_from(0, out)
    }

    /// Copies words `offset ..` (as many as `out` holds) to the host; waits as `download`.
    pub(crate) fn download_from(&self, offset: usize, out: &mut [u64]) -> Result<()> {
        if offset + out.len() > self.len {
            return Err(Error::invalid(format!(
                "download of {} words at {offset} from an image of {}",
                out.len(),
                self.len
            )));
        }
        if out.is_empty() {
            return Ok(());
        }
        self.buffer()?.read(out).offset(offset).enq()?;
        Ok(())
    }

    /// A new image with the same words, copied on the device (enqueued).
    pub(crate) fn duplicate(&self, graph: &Graph) -> Result<GpuImage> {
        if self.len == 0 {
            return Ok(GpuImage::empty());
        }
        let copy = graph.alloc(self.len)?;
        crate::cl::copy_range(graph.queue(), self.buffer()?, 0, copy.buffer(), 0, self.len)?;
        Ok(GpuImage {
            buffer: Some(copy),
            len: self.len,
        })
    }

    /// Makes `buffer` the image's, holding `len` words.
    pub(crate) fn replace(&mut self, buffer: PoolBuffer, len: usize) {
        debug_assert!(buffer.words() >= len);
        self.buffer = Some(buffer);
        self.len = len;
    }

    /// Keeps only the first `len` words.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Moves the contents out, leaving the image empty (for in-place operations that
    /// write a new buffer; `restore` puts them back if the operation fails).
    pub(crate) fn take(&mut self) -> GpuImage {
        std::mem::take(self)
    }

    pub(crate) fn restore(&mut self, previous: GpuImage) {
        *self = previous;
    }
}
