//! The float arithmetic kernels' CPU code is written over, so one algorithm serves as the f64
//! reference and as the f32 CPU kernel (the WASM/CPU baseline).

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// f32 or f64.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + Send
    + Sync
    + 'static
{
    /// From an input value.
    fn of(v: f32) -> Self;
    /// From a constant.
    fn lit(v: f64) -> Self;
    /// `e^self`.
    fn exp(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `self^e`.
    fn powf(self, e: Self) -> Self;
    /// `(sin, cos)`.
    fn sin_cos(self) -> (Self, Self);
    /// Larger of two.
    fn max(self, other: Self) -> Self;
    /// The value as f32, rounding.
    fn to_f32(self) -> f32;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            fn of(v: f32) -> Self {
                v as $t
            }
            fn lit(v: f64) -> Self {
                v as $t
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn powf(self, e: Self) -> Self {
                <$t>::powf(self, e)
            }
            fn sin_cos(self) -> (Self, Self) {
                <$t>::sin_cos(self)
            }
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
        }
    };
}

real!(f32);
real!(f64);
