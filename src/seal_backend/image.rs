//! The device image of one SEAL Ciphertext or Plaintext: a pooled buffer and the number of
//! words SEAL's metadata says it holds (the buffer may be larger: pooled buffers are
//! reused for smaller requests, and an image shrinks without copying when polynomials or
//! a plaintext's last prime are dropped).
//!
//! Every buffer an image owns holds at least one word more than the image: the status
//! word at index `len`, where the device writes the result of SEAL's transparency check
//! (`ckks_transparency_flag`) without the host waiting. A pending check is read at the
//! image's first download, the first time the host waits for it anyway.

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
    /// A transparency check enqueued on the device and not yet known to have passed.
    transparency: Option<PendingCheck>,
}

/// SEAL's transparency check of an operation's result, left to the device: the flag word
/// at `flag_at` becomes 1 when the result is transparent.
#[derive(Clone, Debug)]
struct PendingCheck {
    /// The operation that produced the result (for the error message).
    operation: Box<str>,
    flag_at: usize,
}

/// The words of a buffer for an image of `len` words: one more for the status word
/// (`LevelOps::alloc_result` adds it to the results the operations install).
fn words_with_status(len: usize) -> usize {
    len + 1
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
    /// buffer when it is large enough (status word included). New contents: no pending
    /// check.
    pub(crate) fn upload(&mut self, graph: &Graph, data: &[u64]) -> Result<()> {
        self.transparency = None;
        if data.is_empty() {
            self.buffer = None;
            self.len = 0;
            return Ok(());
        }
        let words = words_with_status(data.len());
        match &self.buffer {
            Some(b) if b.words() >= words => {}
            _ => self.buffer = Some(graph.alloc(words)?),
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
    /// With a check pending, first reads its flag: a transparent result is SEAL's
    /// `logic_error`, and `out` is left alone (every download answers the same, since
    /// only a new result or upload replaces the check).
    pub(crate) fn download_from(&self, offset: usize, out: &mut [u64]) -> Result<()> {
        if offset + out.len() > self.len {
            return Err(Error::invalid(format!(
                "download of {} words at {offset} from an image of {}",
                out.len(),
                self.len
            )));
        }
        self.check_pending()?;
        if out.is_empty() {
            return Ok(());
        }
        self.buffer()?.read(out).offset(offset).enq()?;
        Ok(())
    }

    /// Errors when a pending transparency check found the result transparent; waits for
    /// the check (one word read).
    fn check_pending(&self) -> Result<()> {
        let Some(check) = &self.transparency else {
            return Ok(());
        };
        let buffer = self
            .buffer
            .as_ref()
            .ok_or_else(|| Error::Logic("pending transparency check without a buffer".into()))?;
        let mut flag = [0u64];
        buffer
            .buffer()
            .read(&mut flag[..])
            .offset(check.flag_at)
            .enq()?;
        if flag[0] != 0 {
            return Err(Error::Logic(format!(
                "result ciphertext is transparent (result of {}; seal-opencl checks on the \
                 device and reports it at the first host read)",
                check.operation
            )));
        }
        Ok(())
    }

    /// Where a transparency check of this image can write its flag: the status word at
    /// `len`, when the buffer holds it (every buffer an image gets does).
    pub(crate) fn status_word(&self) -> Option<usize> {
        match &self.buffer {
            Some(b) if self.len > 0 && b.words() > self.len => Some(self.len),
            _ => None,
        }
    }

    /// Records a check enqueued to write its flag at `flag_at` (replacing an older one:
    /// the image now holds `operation`'s result).
    pub(crate) fn set_pending(&mut self, operation: &str, flag_at: usize) {
        self.transparency = Some(PendingCheck {
            operation: operation.into(),
            flag_at,
        });
    }

    /// A new image with the same words, copied on the device (enqueued). A pending check
    /// comes along, its flag word copied with the data.
    pub(crate) fn duplicate(&self, graph: &Graph) -> Result<GpuImage> {
        if self.len == 0 {
            return Ok(GpuImage::empty());
        }
        let words = match &self.transparency {
            Some(check) => self.len.max(check.flag_at + 1),
            None => self.len,
        };
        let copy = graph.alloc(words_with_status(words))?;
        crate::cl::copy_range(graph.queue(), self.buffer()?, 0, copy.buffer(), 0, words)?;
        Ok(GpuImage {
            buffer: Some(copy),
            len: self.len,
            transparency: self.transparency.clone(),
        })
    }

    /// Makes `buffer` the image's, holding `len` words (and the status word after them):
    /// a new result, not checked yet.
    pub(crate) fn replace(&mut self, buffer: PoolBuffer, len: usize) {
        debug_assert!(buffer.words() >= words_with_status(len));
        self.buffer = Some(buffer);
        self.len = len;
        self.transparency = None;
    }

    /// Keeps only the first `len` words (the buffer keeps its size, so the status word
    /// still fits; a pending check keeps its flag word).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Moves the contents out (pending check included), leaving the image empty (for
    /// in-place operations that write a new buffer; `restore` puts them back if the
    /// operation fails).
    pub(crate) fn take(&mut self) -> GpuImage {
        std::mem::take(self)
    }

    pub(crate) fn restore(&mut self, previous: GpuImage) {
        *self = previous;
    }
}
