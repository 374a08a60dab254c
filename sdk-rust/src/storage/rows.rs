//! [`Rows`], the answer of a query, its [`Row`]s, and [`ColumnIndex`], which
//! names a column of a row.

use super::{FromValue, Value, ValueError};

/// Names a column of a [`Row`]: its position (`usize`, from 0) or its name
/// (`&str`, exact match, the first column of that name).
///
/// ```
/// # fn f(row: wasmkeep_actor::Row<'_>) -> Result<(), wasmkeep_actor::ValueError> {
/// let by_index: i64 = row.get(0)?;
/// let by_name: i64 = row.get("count")?;
/// # Ok(()) }
/// ```
pub trait ColumnIndex {
    /// The position of the column among `columns`.
    ///
    /// # Errors
    ///
    /// [`ValueError::NoSuchColumn`] or [`ValueError::IndexOutOfRange`].
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError>;
}

impl ColumnIndex for usize {
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError> {
        if *self < columns.len() {
            Ok(*self)
        } else {
            Err(ValueError::IndexOutOfRange {
                index: *self,
                len: columns.len(),
            })
        }
    }
}

impl ColumnIndex for &str {
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError> {
        columns
            .iter()
            .position(|c| c == self)
            .ok_or_else(|| ValueError::NoSuchColumn((*self).to_owned()))
    }
}

/// The answer of [`query`](super::query): the column names, then the rows.
///
/// ```
/// use wasmkeep_actor::{Rows, Value};
///
/// let rows = Rows::new(
///     vec!["id".into(), "name".into()],
///     vec![vec![Value::Integer(1), Value::Text("a".into())]],
/// );
/// assert_eq!(rows.columns(), ["id", "name"]);
/// assert_eq!(rows.len(), 1);
/// let first = rows.first().unwrap();
/// assert_eq!(first.get::<String>("name").unwrap(), "a");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Rows from column names and values (each row in column order). Useful
    /// in tests; [`query`](super::query) builds them for you.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert!(Rows::new(vec!["x".into()], vec![]).is_empty());
    /// ```
    pub fn new(columns: Vec<String>, rows: Vec<Vec<Value>>) -> Self {
        Self { columns, rows }
    }

    /// The column names, in order.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// let rows = Rows::new(vec!["a".into()], vec![]);
    /// assert_eq!(rows.columns(), ["a"]);
    /// ```
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// How many rows there are.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert_eq!(Rows::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert!(Rows::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row at `index`, if any.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["x".into()], vec![vec![Value::Integer(1)]]);
    /// assert!(rows.get(0).is_some());
    /// assert!(rows.get(1).is_none());
    /// ```
    pub fn get(&self, index: usize) -> Option<Row<'_>> {
        self.rows.get(index).map(|values| Row {
            columns: &self.columns,
            values,
        })
    }

    /// The first row, if any.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![Value::Integer(5)]]);
    /// assert_eq!(rows.first().unwrap().get::<i64>(0).unwrap(), 5);
    /// ```
    pub fn first(&self) -> Option<Row<'_>> {
        self.get(0)
    }

    /// Iterates over the rows.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![1.into()], vec![2.into()]]);
    /// let sum: i64 = rows.iter().map(|r| r.get::<i64>(0).unwrap()).sum();
    /// assert_eq!(sum, 3);
    /// ```
    pub fn iter(&self) -> RowIter<'_> {
        RowIter {
            columns: &self.columns,
            rows: self.rows.iter(),
        }
    }

    /// The raw values, row by row, each in column order.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![Value::Null]]);
    /// assert_eq!(rows.into_values(), vec![vec![Value::Null]]);
    /// ```
    pub fn into_values(self) -> Vec<Vec<Value>> {
        self.rows
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Row<'a>;
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

/// An iterator over the rows of [`Rows`]; see [`Rows::iter`].
#[derive(Debug, Clone)]
pub struct RowIter<'a> {
    columns: &'a [String],
    rows: core::slice::Iter<'a, Vec<Value>>,
}

impl<'a> Iterator for RowIter<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        let columns = self.columns;
        self.rows.next().map(|values| Row { columns, values })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl ExactSizeIterator for RowIter<'_> {}

/// One row of [`Rows`].
///
/// ```
/// # use wasmkeep_actor::{Rows, Value};
/// let rows = Rows::new(vec!["id".into(), "note".into()], vec![vec![1.into(), Value::Null]]);
/// let row = rows.first().unwrap();
/// let id: i64 = row.get("id").unwrap();
/// let note: Option<String> = row.get("note").unwrap();
/// assert_eq!((id, note), (1, None));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    columns: &'a [String],
    values: &'a [Value],
}

impl<'a> Row<'a> {
    /// Reads a column, by position (`usize`) or name (`&str`), as `T`.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// # let row = rows.first().unwrap();
    /// let n: i32 = row.get("n").unwrap();
    /// assert_eq!(n, row.get::<i32>(0).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ValueError::NoSuchColumn`] or [`ValueError::IndexOutOfRange`] if
    /// there is no such column; otherwise [`ValueError::InColumn`] wrapping
    /// the conversion's error.
    pub fn get<T: FromValue>(&self, column: impl ColumnIndex) -> Result<T, ValueError> {
        let index = column.index_in(self.columns)?;
        let value = self.values.get(index).unwrap_or(&Value::Null);
        T::from_value(value).map_err(|e| ValueError::InColumn {
            column: self.columns[index].clone(),
            source: Box::new(e),
        })
    }

    /// The raw value of a column, if the row has it.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// let row = rows.first().unwrap();
    /// assert_eq!(row.value(0), Some(&Value::Integer(7)));
    /// assert_eq!(row.value("missing"), None);
    /// ```
    pub fn value(&self, column: impl ColumnIndex) -> Option<&'a Value> {
        let index = column.index_in(self.columns).ok()?;
        self.values.get(index)
    }

    /// The row's values, in column order.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// assert_eq!(rows.first().unwrap().values(), [Value::Integer(7)]);
    /// ```
    pub fn values(&self) -> &'a [Value] {
        self.values
    }

    /// The column names, in order.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// assert_eq!(rows.first().unwrap().columns(), ["n"]);
    /// ```
    pub fn columns(&self) -> &'a [String] {
        self.columns
    }
}
